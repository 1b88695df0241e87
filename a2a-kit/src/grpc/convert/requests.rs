//! The requests of the A2A operations, their list answers, and push-notification configs.

use super::{
    A2aError, FromProto, FromProtoAt, Path, ToProto, from_proto_at_root, metadata,
    metadata_to_proto, non_empty, optional, repeated, required, required_message, task_state,
    to_repeated,
};
use crate::grpc::pb;
use crate::protocol::{
    AuthenticationInfo, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskState,
};

impl FromProtoAt for SendMessageRequest {
    fn from_proto_at(p: pb::SendMessageRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SendMessageRequest {
            tenant: non_empty(p.tenant),
            message: required_message(p.message, &at.field("message"))?,
            configuration: optional(p.configuration, &at.field("configuration"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToProto for SendMessageRequest {
    type Proto = pb::SendMessageRequest;
    fn to_proto(self) -> pb::SendMessageRequest {
        pb::SendMessageRequest {
            tenant: self.tenant.unwrap_or_default(),
            message: Some(self.message.to_proto()),
            configuration: self.configuration.map(ToProto::to_proto),
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromProtoAt for SendMessageConfiguration {
    fn from_proto_at(p: pb::SendMessageConfiguration, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SendMessageConfiguration {
            accepted_output_modes: p.accepted_output_modes,
            task_push_notification_config: optional(
                p.task_push_notification_config,
                &at.field("taskPushNotificationConfig"),
            )?,
            // Negative stays negative: the server's check names it.
            history_length: p.history_length,
            return_immediately: p.return_immediately,
        })
    }
}

impl ToProto for SendMessageConfiguration {
    type Proto = pb::SendMessageConfiguration;
    fn to_proto(self) -> pb::SendMessageConfiguration {
        pb::SendMessageConfiguration {
            accepted_output_modes: self.accepted_output_modes,
            task_push_notification_config: self
                .task_push_notification_config
                .map(ToProto::to_proto),
            history_length: self.history_length,
            return_immediately: self.return_immediately,
        }
    }
}

impl FromProtoAt for GetTaskRequest {
    fn from_proto_at(p: pb::GetTaskRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(GetTaskRequest {
            tenant: non_empty(p.tenant),
            id: required(p.id, &at.field("id"))?,
            history_length: p.history_length,
        })
    }
}

impl ToProto for GetTaskRequest {
    type Proto = pb::GetTaskRequest;
    fn to_proto(self) -> pb::GetTaskRequest {
        pb::GetTaskRequest {
            tenant: self.tenant.unwrap_or_default(),
            id: self.id,
            history_length: self.history_length,
        }
    }
}

impl FromProtoAt for ListTasksRequest {
    fn from_proto_at(p: pb::ListTasksRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(ListTasksRequest {
            tenant: non_empty(p.tenant),
            context_id: non_empty(p.context_id),
            // UNSPECIFIED is "no filter", as in the JSON bindings.
            status: Some(task_state(p.status, &at.field("status"))?)
                .filter(|s| *s != TaskState::Unspecified),
            page_size: p.page_size,
            page_token: non_empty(p.page_token),
            history_length: p.history_length,
            status_timestamp_after: optional(
                p.status_timestamp_after,
                &at.field("statusTimestampAfter"),
            )?,
            include_artifacts: p.include_artifacts,
        })
    }
}

impl ToProto for ListTasksRequest {
    type Proto = pb::ListTasksRequest;
    fn to_proto(self) -> pb::ListTasksRequest {
        pb::ListTasksRequest {
            tenant: self.tenant.unwrap_or_default(),
            context_id: self.context_id.unwrap_or_default(),
            status: self.status.unwrap_or_default().as_i32(),
            page_size: self.page_size,
            page_token: self.page_token.unwrap_or_default(),
            history_length: self.history_length,
            status_timestamp_after: self.status_timestamp_after.map(ToProto::to_proto),
            include_artifacts: self.include_artifacts,
        }
    }
}

impl FromProtoAt for ListTasksResponse {
    fn from_proto_at(p: pb::ListTasksResponse, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(ListTasksResponse {
            tasks: repeated(p.tasks, &at.field("tasks"))?,
            next_page_token: p.next_page_token,
            page_size: p.page_size,
            total_size: p.total_size,
        })
    }
}

impl ToProto for ListTasksResponse {
    type Proto = pb::ListTasksResponse;
    fn to_proto(self) -> pb::ListTasksResponse {
        pb::ListTasksResponse {
            tasks: to_repeated(self.tasks),
            next_page_token: self.next_page_token,
            page_size: self.page_size,
            total_size: self.total_size,
        }
    }
}

impl FromProtoAt for CancelTaskRequest {
    fn from_proto_at(p: pb::CancelTaskRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(CancelTaskRequest {
            tenant: non_empty(p.tenant),
            id: required(p.id, &at.field("id"))?,
            metadata: metadata(p.metadata, &at.field("metadata"))?,
        })
    }
}

impl ToProto for CancelTaskRequest {
    type Proto = pb::CancelTaskRequest;
    fn to_proto(self) -> pb::CancelTaskRequest {
        pb::CancelTaskRequest {
            tenant: self.tenant.unwrap_or_default(),
            id: self.id,
            metadata: metadata_to_proto(self.metadata),
        }
    }
}

impl FromProtoAt for SubscribeToTaskRequest {
    fn from_proto_at(p: pb::SubscribeToTaskRequest, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(SubscribeToTaskRequest {
            tenant: non_empty(p.tenant),
            id: required(p.id, &at.field("id"))?,
        })
    }
}

impl ToProto for SubscribeToTaskRequest {
    type Proto = pb::SubscribeToTaskRequest;
    fn to_proto(self) -> pb::SubscribeToTaskRequest {
        pb::SubscribeToTaskRequest {
            tenant: self.tenant.unwrap_or_default(),
            id: self.id,
        }
    }
}

impl FromProtoAt for AuthenticationInfo {
    fn from_proto_at(p: pb::AuthenticationInfo, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(AuthenticationInfo {
            scheme: required(p.scheme, &at.field("scheme"))?,
            credentials: non_empty(p.credentials),
        })
    }
}

impl ToProto for AuthenticationInfo {
    type Proto = pb::AuthenticationInfo;
    fn to_proto(self) -> pb::AuthenticationInfo {
        pb::AuthenticationInfo {
            scheme: self.scheme,
            credentials: self.credentials.unwrap_or_default(),
        }
    }
}

impl FromProtoAt for TaskPushNotificationConfig {
    fn from_proto_at(p: pb::TaskPushNotificationConfig, at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(TaskPushNotificationConfig {
            tenant: non_empty(p.tenant),
            id: non_empty(p.id),
            task_id: non_empty(p.task_id),
            url: required(p.url, &at.field("url"))?,
            token: non_empty(p.token),
            authentication: optional(p.authentication, &at.field("authentication"))?,
            protocol_version: Default::default(),
        })
    }
}

impl ToProto for TaskPushNotificationConfig {
    type Proto = pb::TaskPushNotificationConfig;
    fn to_proto(self) -> pb::TaskPushNotificationConfig {
        pb::TaskPushNotificationConfig {
            tenant: self.tenant.unwrap_or_default(),
            id: self.id.unwrap_or_default(),
            task_id: self.task_id.unwrap_or_default(),
            url: self.url,
            token: self.token.unwrap_or_default(),
            authentication: self.authentication.map(ToProto::to_proto),
        }
    }
}

impl FromProtoAt for GetTaskPushNotificationConfigRequest {
    fn from_proto_at(
        p: pb::GetTaskPushNotificationConfigRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(GetTaskPushNotificationConfigRequest {
            tenant: non_empty(p.tenant),
            task_id: required(p.task_id, &at.field("taskId"))?,
            id: required(p.id, &at.field("id"))?,
        })
    }
}

impl ToProto for GetTaskPushNotificationConfigRequest {
    type Proto = pb::GetTaskPushNotificationConfigRequest;
    fn to_proto(self) -> pb::GetTaskPushNotificationConfigRequest {
        pb::GetTaskPushNotificationConfigRequest {
            tenant: self.tenant.unwrap_or_default(),
            task_id: self.task_id,
            id: self.id,
        }
    }
}

impl FromProtoAt for DeleteTaskPushNotificationConfigRequest {
    fn from_proto_at(
        p: pb::DeleteTaskPushNotificationConfigRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(DeleteTaskPushNotificationConfigRequest {
            tenant: non_empty(p.tenant),
            task_id: required(p.task_id, &at.field("taskId"))?,
            id: required(p.id, &at.field("id"))?,
        })
    }
}

impl ToProto for DeleteTaskPushNotificationConfigRequest {
    type Proto = pb::DeleteTaskPushNotificationConfigRequest;
    fn to_proto(self) -> pb::DeleteTaskPushNotificationConfigRequest {
        pb::DeleteTaskPushNotificationConfigRequest {
            tenant: self.tenant.unwrap_or_default(),
            task_id: self.task_id,
            id: self.id,
        }
    }
}

impl FromProtoAt for ListTaskPushNotificationConfigsRequest {
    fn from_proto_at(
        p: pb::ListTaskPushNotificationConfigsRequest,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(ListTaskPushNotificationConfigsRequest {
            tenant: non_empty(p.tenant),
            task_id: required(p.task_id, &at.field("taskId"))?,
            // Implicit presence: 0 is unset, as in the JSON bindings; negative is kept for
            // the server's check to name.
            page_size: (p.page_size != 0).then_some(p.page_size),
            page_token: non_empty(p.page_token),
        })
    }
}

impl ToProto for ListTaskPushNotificationConfigsRequest {
    type Proto = pb::ListTaskPushNotificationConfigsRequest;
    fn to_proto(self) -> pb::ListTaskPushNotificationConfigsRequest {
        pb::ListTaskPushNotificationConfigsRequest {
            task_id: self.task_id,
            page_size: self.page_size.unwrap_or_default(),
            page_token: self.page_token.unwrap_or_default(),
            tenant: self.tenant.unwrap_or_default(),
        }
    }
}

impl FromProtoAt for ListTaskPushNotificationConfigsResponse {
    fn from_proto_at(
        p: pb::ListTaskPushNotificationConfigsResponse,
        at: &Path<'_>,
    ) -> Result<Self, A2aError> {
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: repeated(p.configs, &at.field("configs"))?,
            next_page_token: non_empty(p.next_page_token),
        })
    }
}

impl ToProto for ListTaskPushNotificationConfigsResponse {
    type Proto = pb::ListTaskPushNotificationConfigsResponse;
    fn to_proto(self) -> pb::ListTaskPushNotificationConfigsResponse {
        pb::ListTaskPushNotificationConfigsResponse {
            configs: to_repeated(self.configs),
            next_page_token: self.next_page_token.unwrap_or_default(),
        }
    }
}

impl FromProtoAt for GetExtendedAgentCardRequest {
    fn from_proto_at(p: pb::GetExtendedAgentCardRequest, _at: &Path<'_>) -> Result<Self, A2aError> {
        Ok(GetExtendedAgentCardRequest {
            tenant: non_empty(p.tenant),
        })
    }
}

impl ToProto for GetExtendedAgentCardRequest {
    type Proto = pb::GetExtendedAgentCardRequest;
    fn to_proto(self) -> pb::GetExtendedAgentCardRequest {
        pb::GetExtendedAgentCardRequest {
            tenant: self.tenant.unwrap_or_default(),
        }
    }
}

from_proto_at_root!(
    SendMessageRequest,
    SendMessageConfiguration,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    AuthenticationInfo,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    GetExtendedAgentCardRequest,
);
