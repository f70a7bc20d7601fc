//! The per-handle caches behind the check → build → cache lifecycle.
//!
//! A host asks one graph several questions in a row (which engines apply, an engine's
//! details, the workspace size, the plan), each call carrying the same serialized
//! graph. Deciding applicability or building a plan may be expensive for a device
//! engine (heuristics queries, kernel compilation, algorithm search), so the plugin
//! handle remembers:
//!
//! * **applicability**, per graph: for each engine, which of its plan builders applies
//!   (or none), for the last [`ANALYSIS_CACHE_CAPACITY`] distinct graphs;
//! * **plans**, per (engine, knob settings, graph): the built plan, shared by every
//!   execution context made from it, for the last
//!   [`EnginePlugin::PLAN_CACHE_CAPACITY`](crate::EnginePlugin::PLAN_CACHE_CAPACITY)
//!   distinct keys.
//!
//! Keys hold the graph's bytes, so a hit is exact (never a hash collision). Both caches
//! evict the least recently used entry; an evicted plan lives on in the execution
//! contexts that hold it. Locks are never held while plugin code runs: two threads
//! building the same plan at once both build, and the first one stored wins.

use std::any::Any;
use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use hipdnn_flatbuffers_sdk::model::{KnobSetting, KnobValue};

/// How many distinct graphs a handle remembers applicability for.
pub const ANALYSIS_CACHE_CAPACITY: usize = 16;

/// A bounded map with least-recently-used eviction. Capacities are small (tens of
/// entries), so a linear scan over precomputed hashes is fast enough and keeps the
/// order of use in one place.
#[derive(Debug)]
struct Lru<K, V> {
    capacity: usize,
    /// Most recently used last.
    entries: VecDeque<(u64, K, V)>,
}

impl<K: Eq, V: Clone> Lru<K, V> {
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: VecDeque::new(),
        }
    }

    fn get(&mut self, hash: u64, key: &K) -> Option<V> {
        let at = self
            .entries
            .iter()
            .position(|(h, k, _)| *h == hash && k == key)?;
        let entry = self.entries.remove(at)?;
        let value = entry.2.clone();
        self.entries.push_back(entry);
        Some(value)
    }

    /// Inserts unless present; returns the value now stored under `key`.
    fn insert(&mut self, hash: u64, key: K, value: V) -> V {
        if let Some(found) = self.get(hash, &key) {
            return found;
        }
        if self.capacity == 0 {
            return value;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back((hash, key, value.clone()));
        value
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

fn hash_of(parts: impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

/// Which builder of an engine applies to a graph: `Ok(None)` none, `Err` why deciding
/// failed (a builder panicked).
pub(crate) type Verdict = Result<Option<usize>, String>;

/// The verdicts of each asked engine on one graph, shared so that deciding happens
/// outside the cache's lock.
type Verdicts = Arc<Mutex<Vec<(i64, Verdict)>>>;

/// A plan as the cache keeps it: `Arc<C>` for the plugin's context type `C`.
type AnyPlan = Arc<dyn Any + Send + Sync>;

#[derive(Debug, PartialEq, Eq)]
struct PlanKey {
    engine_id: i64,
    knobs: String,
    graph: Box<[u8]>,
}

/// The caches of one plugin handle.
#[derive(Debug)]
pub(crate) struct HandleCaches {
    analyses: Mutex<Lru<Box<[u8]>, Verdicts>>,
    plans: Mutex<Lru<PlanKey, AnyPlan>>,
}

impl HandleCaches {
    pub(crate) fn new(plan_capacity: usize) -> Self {
        Self {
            analyses: Mutex::new(Lru::new(ANALYSIS_CACHE_CAPACITY)),
            plans: Mutex::new(Lru::new(plan_capacity)),
        }
    }

    /// Which builder of engine `engine_id` applies to `graph`: remembered, or decided
    /// by `decide` (run without any lock held) and remembered.
    pub(crate) fn applicable_builder(
        &self,
        engine_id: i64,
        graph: &[u8],
        decide: impl FnOnce() -> Verdict,
    ) -> Verdict {
        let hash = hash_of(graph);
        let verdicts = {
            let mut analyses = lock(&self.analyses);
            match analyses.get(hash, &Box::from(graph)) {
                Some(v) => v,
                None => analyses.insert(hash, Box::from(graph), Arc::default()),
            }
        };
        if let Some((_, verdict)) = lock(&verdicts).iter().find(|(id, _)| *id == engine_id) {
            return verdict.clone();
        }
        let verdict = decide();
        let mut verdicts = lock(&verdicts);
        if !verdicts.iter().any(|(id, _)| *id == engine_id) {
            verdicts.push((engine_id, verdict.clone()));
        }
        verdict
    }

    /// The plan for (`engine_id`, `knobs`, `graph`): remembered, or built by `build`
    /// (run without any lock held) and remembered.
    pub(crate) fn plan<C: Send + Sync + 'static, E>(
        &self,
        engine_id: i64,
        knobs: &[KnobSetting],
        graph: &[u8],
        build: impl FnOnce() -> Result<C, E>,
    ) -> Result<Arc<C>, E> {
        let key = PlanKey {
            engine_id,
            knobs: canonical_knobs(knobs),
            graph: Box::from(graph),
        };
        let hash = hash_of((key.engine_id, &key.knobs, &key.graph));
        let found = lock(&self.plans).get(hash, &key);
        if let Some(plan) = found.and_then(|p| p.downcast::<C>().ok()) {
            return Ok(plan);
        }
        let plan: AnyPlan = Arc::new(build()?);
        let stored = lock(&self.plans).insert(hash, key, plan);
        Ok(stored
            .downcast::<C>()
            .expect("a handle's plans all have the plugin's context type"))
    }

    /// Plans currently remembered.
    pub(crate) fn plan_count(&self) -> usize {
        lock(&self.plans).len()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The caches stay consistent across a panic (every update is one push or pop).
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Knob settings in a canonical text: sorted by knob id, floats by their bits, so two
/// configs choosing the same values in another order share a plan.
fn canonical_knobs(knobs: &[KnobSetting]) -> String {
    let mut parts: Vec<String> = knobs
        .iter()
        .map(|k| {
            let value = match &k.value {
                KnobValue::Int(v) => format!("i{v}"),
                KnobValue::Float(v) => format!("f{:x}", v.to_bits()),
                KnobValue::String(v) => format!("s{v:?}"),
            };
            format!("{:?}={value}", k.knob_id)
        })
        .collect();
    parts.sort();
    parts.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut lru = Lru::new(2);
        lru.insert(1, "a", 1);
        lru.insert(2, "b", 2);
        assert_eq!(lru.get(1, &"a"), Some(1));
        lru.insert(3, "c", 3);
        assert_eq!(lru.get(2, &"b"), None, "b was the least recently used");
        assert_eq!(lru.get(1, &"a"), Some(1));
        assert_eq!(lru.insert(1, "a", 9), 1, "an existing entry wins");
        let mut off = Lru::new(0);
        assert_eq!(off.insert(1, "a", 5), 5);
        assert_eq!(off.len(), 0);
    }

    #[test]
    fn plans_are_built_once_per_key_and_knob_order_does_not_matter() {
        let caches = HandleCaches::new(4);
        let knob = |id: &str, v: i64| KnobSetting {
            knob_id: id.into(),
            value: KnobValue::Int(v),
        };
        let mut builds = 0;
        let mut build = |v: u32| {
            builds += 1;
            Ok::<u32, ()>(v)
        };
        let a = caches
            .plan(1, &[knob("x", 1), knob("y", 2)], b"g", || build(10))
            .unwrap();
        let b = caches
            .plan(1, &[knob("y", 2), knob("x", 1)], b"g", || build(11))
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*b, 10);
        let c = caches.plan(1, &[knob("x", 2)], b"g", || build(12)).unwrap();
        let d = caches.plan(2, &[], b"g", || build(13)).unwrap();
        let e = caches.plan(2, &[], b"h", || build(14)).unwrap();
        assert_eq!((*c, *d, *e), (12, 13, 14));
        assert_eq!(builds, 4);
        assert_eq!(caches.plan_count(), 4);
        assert!(caches.plan(3, &[], b"g", || Err::<u32, ()>(())).is_err());
        assert_eq!(caches.plan_count(), 4, "failures are not remembered");
    }

    #[test]
    fn applicability_is_decided_once_per_engine_and_graph() {
        let caches = HandleCaches::new(0);
        let mut asked = 0;
        for _ in 0..3 {
            let v = caches.applicable_builder(7, b"graph", || {
                asked += 1;
                Ok(Some(1))
            });
            assert_eq!(v, Ok(Some(1)));
        }
        assert_eq!(
            caches.applicable_builder(8, b"graph", || Ok(None)),
            Ok(None)
        );
        assert_eq!(
            caches.applicable_builder(7, b"other", || Ok(None)),
            Ok(None)
        );
        let failed = caches.applicable_builder(9, b"graph", || Err("boom".into()));
        assert_eq!(failed, Err("boom".to_owned()));
        assert_eq!(
            caches.applicable_builder(9, b"graph", || Ok(Some(0))),
            failed
        );
        assert_eq!(asked, 1);
    }
}
