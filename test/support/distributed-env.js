// Jest setup for the "distributed" project: the HTTP suites start a cluster of processes.
process.env.REGISTRY_TOPOLOGY = "distributed";
