//! What became of each delivery.

use crate::protocol::Timestamp;
use crate::store::Seq;

/// The result of delivering one event to one config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The webhook answered `2xx`.
    Delivered {
        /// Its HTTP status.
        status: u16,
    },
    /// The webhook answered with a final refusal (a `4xx` other than `429`, or a redirect,
    /// which is not followed).
    Rejected {
        /// Its HTTP status.
        status: u16,
    },
    /// Every attempt failed with a retryable error (connection, timeout, `5xx`, `429`), or the
    /// receiver asked to wait longer than [`RetryPolicy::max_retry_after`](super::RetryPolicy::max_retry_after).
    GaveUp {
        /// The last error.
        error: String,
    },
    /// The SSRF guard refused the destination; nothing was sent.
    Blocked {
        /// Why.
        reason: String,
    },
    /// The request could not be built (a malformed URL or header value in the config).
    Invalid {
        /// Why.
        reason: String,
    },
}

impl DeliveryOutcome {
    /// Whether the webhook accepted the event.
    pub fn is_delivered(&self) -> bool {
        matches!(self, DeliveryOutcome::Delivered { .. })
    }
}

impl std::fmt::Display for DeliveryOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeliveryOutcome::Delivered { status } => write!(f, "delivered ({status})"),
            DeliveryOutcome::Rejected { status } => write!(f, "the webhook refused it ({status})"),
            DeliveryOutcome::GaveUp { error } => write!(f, "gave up: {error}"),
            DeliveryOutcome::Blocked { reason } => write!(f, "blocked: {reason}"),
            DeliveryOutcome::Invalid { reason } => write!(f, "invalid: {reason}"),
        }
    }
}

/// One delivery, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryReport {
    /// The event's sequence number in the task's log.
    pub seq: Seq,
    /// HTTP attempts made (0 when nothing was sent).
    pub attempts: u32,
    /// What happened.
    pub outcome: DeliveryOutcome,
    /// When it ended.
    pub at: Timestamp,
}

/// Delivery status of one push config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryStatus {
    /// The task.
    pub task_id: String,
    /// The config.
    pub config_id: String,
    /// The webhook URL used.
    pub url: String,
    /// Events accepted by the webhook.
    pub delivered: u64,
    /// Events that could not be delivered.
    pub failed: u64,
    /// Failed events since the last success.
    pub consecutive_failures: u32,
    /// No more deliveries are attempted (see [`PushConfig::suspend_after`](super::PushConfig::suspend_after)).
    pub suspended: bool,
    /// The most recent delivery.
    pub last: Option<DeliveryReport>,
}
