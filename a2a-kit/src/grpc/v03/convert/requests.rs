//! The operations' requests and push configs between 0.3's gRPC messages and the kit's 1.0
//! types, and the renaming of the fields an operation's error names.

#[allow(clippy::wildcard_imports)]
use super::*;

// ----- Requests -----

impl FromV03At for SendMessageRequest {
    fn from_v03_at(p: pb::SendMessageRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SendMessageRequest {
            tenant: None,
            // `request`, whose JSON name is `message`.
            message: required_message(p.request, &at.field("message"))?,
            configuration: optional(p.configuration, &at.field("configuration"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToV03 for SendMessageRequest {
    type Proto = pb::SendMessageRequest;
    fn to_v03(self) -> pb::SendMessageRequest {
        pb::SendMessageRequest {
            request: Some(self.message.to_v03()),
            configuration: self.configuration.map(ToV03::to_v03),
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromV03At for SendMessageConfiguration {
    fn from_v03_at(p: pb::SendMessageConfiguration, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SendMessageConfiguration {
            accepted_output_modes: p.accepted_output_modes,
            task_push_notification_config: p
                .push_notification
                .map(|c| push_config_from_v03(c, None, &at.field("pushNotification")))
                .transpose()?,
            history_length: set_int(p.history_length),
            return_immediately: !p.blocking,
        })
    }
}

impl ToV03 for SendMessageConfiguration {
    type Proto = pb::SendMessageConfiguration;
    fn to_v03(self) -> pb::SendMessageConfiguration {
        pb::SendMessageConfiguration {
            accepted_output_modes: self.accepted_output_modes,
            push_notification: self.task_push_notification_config.map(push_config_to_v03),
            history_length: self.history_length.unwrap_or_default(),
            blocking: !self.return_immediately,
        }
    }
}

impl FromV03At for GetTaskRequest {
    fn from_v03_at(p: pb::GetTaskRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(GetTaskRequest {
            tenant: None,
            id: task_name(p.name, &at.field("name"))?,
            history_length: set_int(p.history_length),
        })
    }
}

impl ToV03 for GetTaskRequest {
    type Proto = pb::GetTaskRequest;
    fn to_v03(self) -> pb::GetTaskRequest {
        pb::GetTaskRequest {
            name: task_name_of(&self.id),
            history_length: self.history_length.unwrap_or_default(),
        }
    }
}

impl FromV03At for CancelTaskRequest {
    fn from_v03_at(p: pb::CancelTaskRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(CancelTaskRequest {
            tenant: None,
            id: task_name(p.name, &at.field("name"))?,
            metadata: None,
        })
    }
}

impl ToV03 for CancelTaskRequest {
    type Proto = pb::CancelTaskRequest;
    fn to_v03(self) -> pb::CancelTaskRequest {
        pb::CancelTaskRequest {
            name: task_name_of(&self.id),
        }
    }
}

impl FromV03At for SubscribeToTaskRequest {
    fn from_v03_at(p: pb::TaskSubscriptionRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SubscribeToTaskRequest {
            tenant: None,
            id: task_name(p.name, &at.field("name"))?,
        })
    }
}

impl ToV03 for SubscribeToTaskRequest {
    type Proto = pb::TaskSubscriptionRequest;
    fn to_v03(self) -> pb::TaskSubscriptionRequest {
        pb::TaskSubscriptionRequest {
            name: task_name_of(&self.id),
        }
    }
}

impl FromV03At for GetExtendedAgentCardRequest {
    fn from_v03_at(_: pb::GetAgentCardRequest, _: &Path<'_>) -> Result<Self, A2aError> {
        Ok(GetExtendedAgentCardRequest::default())
    }
}

impl ToV03 for GetExtendedAgentCardRequest {
    type Proto = pb::GetAgentCardRequest;
    fn to_v03(self) -> pb::GetAgentCardRequest {
        pb::GetAgentCardRequest {}
    }
}

// ----- Push notification configs -----

/// A v0.3 webhook (of task `task_id`, when known) as 1.0's config.
fn push_config_from_v03(
    p: pb::PushNotificationConfig,
    task_id: Option<String>,
    at: &Path<'_>,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let authentication = match p.authentication {
        None => None,
        Some(auth) => {
            let at = at.field("authentication");
            let Some(scheme) = auth.schemes.into_iter().find(|s| !s.is_empty()) else {
                return Err(invalid(
                    &at.field("schemes"),
                    "must name at least one scheme",
                ));
            };
            Some(AuthenticationInfo {
                scheme,
                credentials: non_empty(auth.credentials),
            })
        }
    };
    Ok(TaskPushNotificationConfig {
        id: non_empty(p.id),
        task_id,
        url: required(p.url, &at.field("url"))?,
        token: non_empty(p.token),
        authentication,
        ..Default::default()
    })
}

/// 1.0's config as a v0.3 webhook (its task goes in the resource name, where there is one).
fn push_config_to_v03(c: TaskPushNotificationConfig) -> pb::PushNotificationConfig {
    pb::PushNotificationConfig {
        id: c.id.unwrap_or_default(),
        url: c.url,
        token: c.token.unwrap_or_default(),
        authentication: c.authentication.map(|a| pb::AuthenticationInfo {
            schemes: vec![a.scheme],
            credentials: a.credentials.unwrap_or_default(),
        }),
    }
}

impl FromV03At for TaskPushNotificationConfig {
    fn from_v03_at(p: pb::TaskPushNotificationConfig, at: &Path<'_>) -> Result<Self, A2aError> {
        let (task_id, id) = config_name(p.name, &at.field("name"))?;
        let config_at = at.field("pushNotificationConfig");
        let mut config = push_config_from_v03(
            p.push_notification_config
                .ok_or_else(|| invalid(&config_at, "is required"))?,
            Some(task_id),
            &config_at,
        )?;
        if config.id.as_ref().is_some_and(|own| *own != id) {
            return Err(invalid(
                &config_at.field("id"),
                format!("differs from the config id `{id}` of `name`"),
            ));
        }
        config.id = Some(id);
        Ok(config)
    }
}

impl ToV03 for TaskPushNotificationConfig {
    type Proto = pb::TaskPushNotificationConfig;
    fn to_v03(self) -> pb::TaskPushNotificationConfig {
        let name = config_name_of(
            self.task_id.as_deref().unwrap_or_default(),
            self.id.as_deref().unwrap_or_default(),
        );
        pb::TaskPushNotificationConfig {
            name,
            push_notification_config: Some(push_config_to_v03(self)),
        }
    }
}

/// CreateTaskPushNotificationConfig's request as the config to create: the task from
/// `parent`, the webhook from `config.push_notification_config`, its id from `config_id`,
/// else the webhook's own (both given and different is refused), else none (the agent makes
/// one). `config.name` is not read.
///
/// ```
/// use a2a_kit::grpc::v03::{convert::create_push_config_from_v03, pb};
/// let config = create_push_config_from_v03(pb::CreateTaskPushNotificationConfigRequest {
///     parent: "tasks/t-1".into(),
///     config_id: "c-1".into(),
///     config: Some(pb::TaskPushNotificationConfig {
///         name: String::new(),
///         push_notification_config: Some(pb::PushNotificationConfig {
///             url: "https://hooks.example.com/a2a".into(),
///             ..Default::default()
///         }),
///     }),
/// })?;
/// assert_eq!(config.task_id.as_deref(), Some("t-1"));
/// assert_eq!(config.id.as_deref(), Some("c-1"));
/// # Ok::<(), a2a_kit::error::A2aError>(())
/// ```
pub fn create_push_config_from_v03(
    p: pb::CreateTaskPushNotificationConfigRequest,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let root = Path::Root;
    let task_id = task_name(p.parent, &root.field("parent"))?;
    let config_at = root.field("config");
    let config = p.config.ok_or_else(|| invalid(&config_at, "is required"))?;
    let webhook_at = config_at.field("pushNotificationConfig");
    let webhook = config
        .push_notification_config
        .ok_or_else(|| invalid(&webhook_at, "is required"))?;
    let mut out = push_config_from_v03(webhook, Some(task_id), &webhook_at)?;
    match (non_empty(p.config_id), out.id.as_deref()) {
        (Some(config_id), Some(own)) if config_id != own => {
            return Err(invalid(
                &root.field("configId"),
                format!(
                    "names config `{config_id}` but `config.pushNotificationConfig.id` is `{own}`"
                ),
            ));
        }
        (Some(config_id), _) => out.id = Some(config_id),
        (None, _) => {}
    }
    Ok(out)
}

impl FromV03At for GetTaskPushNotificationConfigRequest {
    fn from_v03_at(
        p: pb::GetTaskPushNotificationConfigRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        let (task_id, id) = config_name(p.name, &at.field("name"))?;
        Ok(GetTaskPushNotificationConfigRequest {
            tenant: None,
            task_id,
            id,
        })
    }
}

impl ToV03 for GetTaskPushNotificationConfigRequest {
    type Proto = pb::GetTaskPushNotificationConfigRequest;
    fn to_v03(self) -> pb::GetTaskPushNotificationConfigRequest {
        pb::GetTaskPushNotificationConfigRequest {
            name: config_name_of(&self.task_id, &self.id),
        }
    }
}

impl FromV03At for DeleteTaskPushNotificationConfigRequest {
    fn from_v03_at(
        p: pb::DeleteTaskPushNotificationConfigRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        let (task_id, id) = config_name(p.name, &at.field("name"))?;
        Ok(DeleteTaskPushNotificationConfigRequest {
            tenant: None,
            task_id,
            id,
        })
    }
}

impl ToV03 for DeleteTaskPushNotificationConfigRequest {
    type Proto = pb::DeleteTaskPushNotificationConfigRequest;
    fn to_v03(self) -> pb::DeleteTaskPushNotificationConfigRequest {
        pb::DeleteTaskPushNotificationConfigRequest {
            name: config_name_of(&self.task_id, &self.id),
        }
    }
}

impl FromV03At for ListTaskPushNotificationConfigsRequest {
    fn from_v03_at(
        p: pb::ListTaskPushNotificationConfigRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(ListTaskPushNotificationConfigsRequest {
            tenant: None,
            task_id: task_name(p.parent, &at.field("parent"))?,
            page_size: set_int(p.page_size),
            page_token: non_empty(p.page_token),
        })
    }
}

impl ToV03 for ListTaskPushNotificationConfigsRequest {
    type Proto = pb::ListTaskPushNotificationConfigRequest;
    fn to_v03(self) -> pb::ListTaskPushNotificationConfigRequest {
        pb::ListTaskPushNotificationConfigRequest {
            parent: task_name_of(&self.task_id),
            page_size: self.page_size.unwrap_or_default(),
            page_token: self.page_token.unwrap_or_default(),
        }
    }
}

impl FromV03At for ListTaskPushNotificationConfigsResponse {
    fn from_v03_at(
        p: pb::ListTaskPushNotificationConfigResponse,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: repeated(p.configs, &at.field("configs"))?,
            next_page_token: non_empty(p.next_page_token),
        })
    }
}

impl ToV03 for ListTaskPushNotificationConfigsResponse {
    type Proto = pb::ListTaskPushNotificationConfigResponse;
    fn to_v03(self) -> pb::ListTaskPushNotificationConfigResponse {
        pb::ListTaskPushNotificationConfigResponse {
            configs: to_repeated(self.configs),
            next_page_token: self.next_page_token.unwrap_or_default(),
        }
    }
}

from_v03_at_root!(
    Part,
    Message,
    Artifact,
    TaskStatus,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    StreamResponse,
    SendMessageResponse,
    SendMessageRequest,
    SendMessageConfiguration,
    GetTaskRequest,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    GetExtendedAgentCardRequest,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
);

// ----- Errors of the operations -----

/// An operation's `InvalidParams` naming the 1.0 fields of its request (`message.parts`) as
/// the v0.3 request names them (`message.content`): each `(from, to)` renames a field and
/// what is under it, in the violations and the message. Any other error is returned as is.
///
/// ```
/// use a2a_kit::error::A2aError;
/// use a2a_kit::grpc::v03::convert::renamed_fields;
/// let err = A2aError::invalid_field("message.parts[1].url", "is required");
/// let err = renamed_fields(err, &[("message.parts", "message.content")]);
/// assert_eq!(err.to_string(), "invalid `message.content[1].url`: is required");
/// ```
pub fn renamed_fields(err: A2aError, renames: &[(&str, &str)]) -> A2aError {
    let A2aError::InvalidParams {
        mut message,
        mut violations,
    } = err
    else {
        return err;
    };
    for v in &mut violations {
        for (from, to) in renames {
            let Some(rest) = v.field.strip_prefix(from) else {
                continue;
            };
            if rest.is_empty() || rest.starts_with(['.', '[']) {
                let renamed = format!("{to}{rest}");
                message = message.replace(&format!("`{}`", v.field), &format!("`{renamed}`"));
                v.field = renamed;
                break;
            }
        }
    }
    A2aError::InvalidParams {
        message,
        violations,
    }
}
