//! The hash map of the per-request bookkeeping (running tasks, doorbells, the in-memory
//! store's index): foldhash is several times faster than SipHash on short ids, and its
//! per-map random seed keeps chosen keys from colliding on purpose.

/// A `HashMap` with foldhash's seeded hasher.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
