//! The gRPC binding's wire: the messages and stubs of `lf.a2a.v1.A2AService` (prost and
//! tonic code generated from `a2a-kit/proto/a2a.proto`, committed; `scripts/regen-proto.sh`
//! regenerates it), their conversions to and from the kit's protocol types, the codec both
//! sides use, and A2A errors as statuses; and A2A v0.3's service, `a2a.v1.A2AService`
//! ([`v03`]: its messages, stubs and their translation to the same types).
//!
//! The generated messages are plain prost structs (`pb`, `v03::pb`); the rest of the kit never
//! sees them: the server binding (`binding::grpc`) and the client's transport convert at their
//! edge with [`convert`] (and [`v03::convert`]).

use std::marker::PhantomData;

use std::collections::HashMap;

use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::{A2aError, ERROR_DOMAIN};

pub mod convert;
pub mod v03;

/// The prost messages and tonic stubs of package `lf.a2a.v1`, generated from
/// `a2a-kit/proto/a2a.proto` (wire-identical to the A2A v1.0.1 specification's proto).
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
pub mod pb {
    include!("gen/lf.a2a.v1.rs");
}

/// The full name of the A2A gRPC service.
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";

/// prost's codec, but a message that does not decode is `INVALID_ARGUMENT` (the client's
/// mistake), where tonic's own codec says `INTERNAL`.
#[derive(Debug)]
pub struct ProtoCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for ProtoCodec<T, U> {
    fn default() -> Self {
        ProtoCodec(PhantomData)
    }
}

impl<T, U> Codec for ProtoCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = tonic_prost::ProstEncoder<T>;
    type Decoder = ProtoDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder(PhantomData)
    }
}

/// The decoder of [`ProtoCodec`].
#[derive(Debug)]
pub struct ProtoDecoder<U>(PhantomData<U>);

impl<U: prost::Message + Default> Decoder for ProtoDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf).map(Some).map_err(|e| {
            Status::invalid_argument(format!("the message is not valid protobuf: {e}"))
        })
    }
}

/// `err` as a status with `code` and `message`, and its details (`google.rpc.Status` in
/// `grpc-status-details-bin`): a `google.rpc.ErrorInfo` (the error's reason, domain
/// `a2a-protocol.org`, the ids it is about) and, for invalid parameters, a
/// `google.rpc.BadRequest` naming each field.
pub(crate) fn error_status(err: &A2aError, code: Code, message: String) -> Status {
    let metadata: HashMap<String, String> = err
        .metadata()
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => (k, s),
            other => (k, other.to_string()),
        })
        .collect();
    let mut details = ErrorDetails::with_error_info(err.reason(), ERROR_DOMAIN, metadata);
    if let A2aError::InvalidParams { violations, .. } = err
        && !violations.is_empty()
    {
        details.set_bad_request(
            violations
                .iter()
                .map(|v| tonic_types::FieldViolation::new(v.field.clone(), v.description.clone()))
                .collect::<Vec<_>>(),
        );
    }
    Status::with_error_details(code, message, details)
}
