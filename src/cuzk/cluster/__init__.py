"""cuzk on a Ray cluster: a fleet of engines behind one front (issue 33).

- `policy`: where a job runs (pure data, no Ray), shared by the front and the simulation;
- `simulate`: the fleet-scale discrete-event simulation of that policy;
- `actor`: one engine per node (or GPU set) as a Ray actor;
- `front`: the `Fleet` (the engine's Python API over the actors) and its gRPC daemon.

Ray is an optional extra (`pip install -e ".[cluster]"`); only `actor` and `front` import it,
and only when a fleet starts, so the single-host daemon never needs it.
"""
