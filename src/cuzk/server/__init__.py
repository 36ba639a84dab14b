"""The daemon: the gRPC `cuzk.v1.ProvingEngine` service, the HTTP status page and metrics, on the engine."""
