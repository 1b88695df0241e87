//! What a send carries: the message and the request's configuration.

use super::*;

/// What to send: a message plus the request's configuration. Built from a `&str`/`String`
/// (a user text message), a [`Message`] or a full [`SendMessageRequest`].
///
/// ```
/// use a2a_kit::client::SendRequest;
/// let req = SendRequest::text("plan a trip").skill("plan").return_immediately(true).history_length(0);
/// assert_eq!(req.request.message.metadata.as_ref().unwrap()["skillId"], "plan");
/// assert!(req.request.configuration.as_ref().unwrap().return_immediately);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    /// The request as it will be sent (the tenant is filled in from the interface).
    pub request: SendMessageRequest,
}

impl SendRequest {
    /// Send `message`.
    pub fn new(message: Message) -> Self {
        SendRequest {
            request: SendMessageRequest {
                message,
                ..SendMessageRequest::default()
            },
        }
    }

    /// A user message with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(Message::user_text(text))
    }

    fn config(&mut self) -> &mut SendMessageConfiguration {
        self.request
            .configuration
            .get_or_insert_with(SendMessageConfiguration::default)
    }

    /// Route to a skill: sets `message.metadata.skillId` (the a2a-kit convention).
    #[must_use]
    pub fn skill(mut self, skill_id: impl Into<String>) -> Self {
        self.request
            .message
            .metadata
            .get_or_insert_with(Metadata::new)
            .insert("skillId".into(), Value::String(skill_id.into()));
        self
    }

    /// Return as soon as the task exists instead of waiting for it to finish.
    #[must_use]
    pub fn return_immediately(mut self, yes: bool) -> Self {
        self.config().return_immediately = yes;
        self
    }

    /// At most `n` history messages in the returned task (0: none).
    #[must_use]
    pub fn history_length(mut self, n: i32) -> Self {
        self.config().history_length = Some(n);
        self
    }

    /// The media types the client accepts.
    #[must_use]
    pub fn accepted_output_modes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        modes: I,
    ) -> Self {
        self.config().accepted_output_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Ask for push notifications for the task this message creates.
    #[must_use]
    pub fn push_config(mut self, config: TaskPushNotificationConfig) -> Self {
        self.config().task_push_notification_config = Some(config);
        self
    }

    /// Continue an existing task (sets `message.taskId`).
    #[must_use]
    pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
        self.request.message.task_id = Some(task_id.into());
        self
    }

    /// Send within a context (sets `message.contextId`).
    #[must_use]
    pub fn context_id(mut self, context_id: impl Into<String>) -> Self {
        self.request.message.context_id = Some(context_id.into());
        self
    }

    /// Request-level metadata.
    #[must_use]
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.request.metadata = Some(metadata);
        self
    }
}

impl From<Message> for SendRequest {
    fn from(m: Message) -> Self {
        SendRequest::new(m)
    }
}
impl From<SendMessageRequest> for SendRequest {
    fn from(request: SendMessageRequest) -> Self {
        SendRequest { request }
    }
}
impl From<&str> for SendRequest {
    fn from(text: &str) -> Self {
        SendRequest::text(text)
    }
}
impl From<String> for SendRequest {
    fn from(text: String) -> Self {
        SendRequest::text(text)
    }
}
