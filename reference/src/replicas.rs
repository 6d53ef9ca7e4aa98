//! The world of replicas: how the replicas of one run meet at collectives
//! and exchange Send/Recv data (to be designed and built).

/// Where the replicas of one run synchronise.
#[derive(Debug, Default)]
pub struct Hub {}
