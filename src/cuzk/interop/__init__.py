"""circom and snarkjs interop on BLS12-381 (docs/INTEROP.md).

    binfile        the iden3 binary container, memory-mapped (shared by the three formats)
    r1cs           circom .r1cs v1 -> CSR matrices (read_r1cs, write_r1cs)
    wtns           circom .wtns v2 -> Fr witness (read_wtns, write_wtns)
    zkey           snarkjs Groth16 .zkey v1, zero-copy (read_zkey, write_zkey, Zkey)
    snarkjs_json   proof.json, public.json, verification_key.json exactly as snarkjs writes them
    prover         a zkey as a key of the one Groth16 prover (snarkjs's QAP and query conventions)
    setup          a development (not ceremony) zkey from fresh random toxic waste
    export         native cuzk keys and proofs as snarkjs JSON

Submodules are imported on demand, so `import cuzk.interop` costs nothing.
"""
