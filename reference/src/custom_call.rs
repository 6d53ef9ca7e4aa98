//! CustomCall targets: a registry of named functions over literals (to be
//! designed and built).

/// The custom-call targets a run may call.
#[derive(Debug, Default, Clone)]
pub struct Registry {}
