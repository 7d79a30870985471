//! provider: the Cluster API actuators for AWS (cluster: reconcile, delete; machine: create,
//! delete, update, exists). Not built yet: the work is tracked as issues P1 and P2; see
//! ARCHITECTURE.md.
