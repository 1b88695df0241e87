//! The edge's refusals in the form of the request they refuse: a gRPC call gets a gRPC
//! status, any other request the JSON body [`edge_refusal`] writes.

use super::response::{A2aBody, edge_refusal};

/// [`edge_refusal`] in the form of the request it refuses: a gRPC call (feature `grpc`) gets
/// a gRPC status (Trailers-Only: HTTP 200, `grpc-status`, `grpc-message`), any other request
/// the JSON body.
pub fn edge_refusal_for(
    request: &http::HeaderMap,
    status: http::StatusCode,
    grpc_status: &str,
    message: &str,
    retry_after: Option<std::time::Duration>,
) -> http::Response<A2aBody> {
    as_binding(
        request,
        edge_refusal(status, grpc_status, message, retry_after),
    )
}

/// An edge refusal in the form of the request it refuses (see [`edge_refusal_for`]).
pub(super) fn as_binding(
    request: &http::HeaderMap,
    refusal: http::Response<A2aBody>,
) -> http::Response<A2aBody> {
    #[cfg(feature = "grpc")]
    if super::grpc::is_grpc(request)
        && let Some(r) = refusal
            .extensions()
            .get::<super::response::RefusalStatus>()
            .cloned()
    {
        return super::grpc::refusal_as_grpc(refusal.headers(), &r.code, &r.message);
    }
    #[cfg(not(feature = "grpc"))]
    let _ = request;
    refusal
}
