//! Where an engine's tensors live: host or device memory.
//!
//! hipDNN's engines all take device pointers, and its ABI has no field saying
//! otherwise. An engine that runs on the host (the CPU provider, test plugins) says so
//! with one extension value in its details' behavior notes,
//! [`HOST_MEMORY_BEHAVIOR_NOTE_EXT`]: hipDNN's own backend ignores a note it does not
//! know, and ours reads it to hand the engine host buffers. No note means device
//! memory, so every upstream plugin keeps its meaning.

/// The behavior note (an `EngineDetails.behavior_notes` value) of an engine whose
/// tensors, workspace and execution run in host memory. hipDNN's `BehaviorNote`
/// enumerators are 0–4; this extension value sits far from them.
pub const HOST_MEMORY_BEHAVIOR_NOTE_EXT: i32 = 10_000;

/// The memory an engine's buffers (tensors and workspace) must be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemoryKind {
    /// Device memory, used on the stream of the hipDNN handle (the ABI's default).
    #[default]
    Device,
    /// Host memory; the engine runs on the calling thread.
    Host,
}

impl MemoryKind {
    /// The kind an engine with these behavior notes declares.
    pub fn from_behavior_notes(notes: &[i32]) -> Self {
        if notes.contains(&HOST_MEMORY_BEHAVIOR_NOTE_EXT) {
            Self::Host
        } else {
            Self::Device
        }
    }

    /// The behavior note declaring this kind, if any (device memory needs none).
    pub fn behavior_note(self) -> Option<i32> {
        match self {
            Self::Host => Some(HOST_MEMORY_BEHAVIOR_NOTE_EXT),
            Self::Device => None,
        }
    }

    /// `"host"` or `"device"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Device => "device",
        }
    }
}

impl std::fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_decide_the_kind_and_round_trip() {
        assert_eq!(MemoryKind::from_behavior_notes(&[]), MemoryKind::Device);
        assert_eq!(
            MemoryKind::from_behavior_notes(&[0, 2, 4]),
            MemoryKind::Device
        );
        assert_eq!(
            MemoryKind::from_behavior_notes(&[2, HOST_MEMORY_BEHAVIOR_NOTE_EXT]),
            MemoryKind::Host
        );
        for kind in [MemoryKind::Host, MemoryKind::Device] {
            let notes: Vec<i32> = kind.behavior_note().into_iter().collect();
            assert_eq!(MemoryKind::from_behavior_notes(&notes), kind);
        }
        assert_eq!(MemoryKind::Host.to_string(), "host");
    }
}
