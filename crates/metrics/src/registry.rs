//! The table of metrics known to a test run.

use std::collections::HashMap;
use std::sync::RwLock;

use thiserror::Error;

use crate::builtin;
use crate::metric::{is_valid_metric_name, MetricId, MetricInfo, MetricType, ValueType};

/// Why a metric could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MetricError {
    /// The name breaks k6's rule `^[a-zA-Z_][a-zA-Z0-9_]{1,128}$`.
    #[error("invalid metric name: '{0}'; metric names must only include up to 128 ASCII letters, numbers, or underscores and start with a letter or an underscore")]
    InvalidName(String),
    /// The name is taken by a metric of another type.
    #[error("metric '{name}' already exists but with type {existing}, instead of {requested}")]
    TypeMismatch {
        /// The metric name.
        name: String,
        /// The type it was first registered with.
        existing: MetricType,
        /// The type asked for now.
        requested: MetricType,
    },
    /// The name is taken by a metric of the same type but another value type.
    #[error(
        "metric '{name}' already exists but with a value type {existing}, instead of {requested}"
    )]
    ValueTypeMismatch {
        /// The metric name.
        name: String,
        /// The value type it was first registered with.
        existing: ValueType,
        /// The value type asked for now.
        requested: ValueType,
    },
}

/// Thread-safe metric table; written during init, read afterwards. Share it as `Arc<Registry>`.
#[derive(Debug)]
pub struct Registry {
    inner: RwLock<Table>,
}

#[derive(Debug, Default)]
struct Table {
    infos: Vec<MetricInfo>,
    by_name: HashMap<String, MetricId>,
}

impl Registry {
    /// A registry holding k6's built-in metrics at the ids of [`builtin`].
    pub fn new() -> Self {
        let mut table = Table::default();
        for (name, kind, contains) in builtin::ALL {
            table.push(name, kind, contains);
        }
        Registry {
            inner: RwLock::new(table),
        }
    }

    /// Registers a metric, or returns the existing id when name, type and value type match.
    pub fn register(
        &self,
        name: &str,
        kind: MetricType,
        contains: ValueType,
    ) -> Result<MetricId, MetricError> {
        if !is_valid_metric_name(name) {
            return Err(MetricError::InvalidName(name.to_owned()));
        }
        let mut table = self.write();
        if let Some(&id) = table.by_name.get(name) {
            let existing = &table.infos[id.index()];
            if existing.kind != kind {
                return Err(MetricError::TypeMismatch {
                    name: name.to_owned(),
                    existing: existing.kind,
                    requested: kind,
                });
            }
            if existing.contains != contains {
                return Err(MetricError::ValueTypeMismatch {
                    name: name.to_owned(),
                    existing: existing.contains,
                    requested: contains,
                });
            }
            return Ok(id);
        }
        Ok(table.push(name, kind, contains))
    }

    /// The id of a registered metric.
    pub fn get(&self, name: &str) -> Option<MetricId> {
        self.read().by_name.get(name).copied()
    }

    /// Name and types of a metric.
    ///
    /// # Panics
    /// When `id` did not come from this registry.
    pub fn info(&self, id: MetricId) -> MetricInfo {
        self.read().infos[id.index()].clone()
    }

    /// Every registered metric in id order.
    pub fn all(&self) -> Vec<(MetricId, MetricInfo)> {
        self.read()
            .infos
            .iter()
            .enumerate()
            .map(|(i, info)| (MetricId(i as u32), info.clone()))
            .collect()
    }

    /// Number of registered metrics (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.read().infos.len()
    }

    /// Always false: the built-ins are always there.
    pub fn is_empty(&self) -> bool {
        self.read().infos.is_empty()
    }

    // A panic while holding the lock leaves the table consistent (every write is a
    // single push), so a poisoned lock is safe to keep using.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Table> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Table> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Table {
    fn push(&mut self, name: &str, kind: MetricType, contains: ValueType) -> MetricId {
        let id = MetricId(self.infos.len() as u32);
        self.infos.push(MetricInfo {
            name: name.to_owned(),
            kind,
            contains,
        });
        self.by_name.insert(name.to_owned(), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_have_fixed_ids_and_k6_types() {
        let r = Registry::new();
        assert_eq!(r.len(), builtin::ALL.len());
        assert_eq!(r.get("vus"), Some(builtin::VUS));
        assert_eq!(r.get("http_req_failed"), Some(builtin::HTTP_REQ_FAILED));
        let d = r.info(builtin::HTTP_REQ_DURATION);
        assert_eq!(d.name, "http_req_duration");
        assert_eq!(d.kind, MetricType::Trend);
        assert_eq!(d.contains, ValueType::Time);
        let sent = r.info(builtin::DATA_SENT);
        assert_eq!(
            (sent.kind, sent.contains),
            (MetricType::Counter, ValueType::Data)
        );
        assert_eq!(r.info(builtin::CHECKS).kind, MetricType::Rate);
        for (i, (id, info)) in r.all().into_iter().enumerate() {
            assert_eq!(id, MetricId(i as u32));
            assert_eq!(info.name, builtin::ALL[i].0);
        }
    }

    #[test]
    fn register_is_idempotent_for_same_type() {
        let r = Registry::new();
        let a = r
            .register("my_trend", MetricType::Trend, ValueType::Time)
            .unwrap();
        let b = r
            .register("my_trend", MetricType::Trend, ValueType::Time)
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a, MetricId(builtin::ALL.len() as u32));
        assert_eq!(r.get("my_trend"), Some(a));
        assert_eq!(r.get("nope"), None);
    }

    #[test]
    fn register_rejects_redefinition_and_bad_names() {
        let r = Registry::new();
        r.register("c", MetricType::Counter, ValueType::Default)
            .unwrap_err();
        let err = r
            .register("http_reqs", MetricType::Trend, ValueType::Default)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "metric 'http_reqs' already exists but with type counter, instead of trend"
        );
        r.register("t1", MetricType::Trend, ValueType::Default)
            .unwrap();
        let err = r
            .register("t1", MetricType::Trend, ValueType::Time)
            .unwrap_err();
        assert!(matches!(err, MetricError::ValueTypeMismatch { .. }));
        let err = r
            .register("bad-name", MetricType::Rate, ValueType::Default)
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("invalid metric name: 'bad-name'"));
    }

    #[test]
    fn registry_is_shareable_across_threads() {
        let r = std::sync::Arc::new(Registry::new());
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let r = r.clone();
                std::thread::spawn(move || {
                    r.register(
                        &format!("m_{}", i % 2),
                        MetricType::Counter,
                        ValueType::Default,
                    )
                    .unwrap()
                })
            })
            .collect();
        let ids: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(ids[0], ids[2]);
        assert_eq!(ids[1], ids[3]);
        assert_eq!(r.len(), builtin::ALL.len() + 2);
    }
}
