//! Server reflection for `connect(addr, { reflect: true })`: the services the server lists
//! and the files that define them (with their imports), asked over `grpc.reflection.v1`
//! and, when the server lacks it, `v1alpha`, as grpc-go's automatic client does.

use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use prost_reflect::prost_types::{FileDescriptorProto, FileDescriptorSet};
use rk6_http::grpc::{code, GrpcConn};

/// `ServerReflectionRequest` with the one field of its oneof rk6 asks with.
#[derive(Clone, PartialEq, Message)]
struct Request {
    #[prost(string, optional, tag = "3")]
    file_by_filename: Option<String>,
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
    #[prost(string, optional, tag = "7")]
    list_services: Option<String>,
}

/// `ServerReflectionResponse`, the oneof's variants as optional fields.
#[derive(Clone, PartialEq, Message)]
struct Response {
    #[prost(message, optional, tag = "4")]
    file_descriptor_response: Option<FileDescriptors>,
    #[prost(message, optional, tag = "6")]
    list_services_response: Option<ServiceList>,
    #[prost(message, optional, tag = "7")]
    error_response: Option<ErrorResponse>,
}

#[derive(Clone, PartialEq, Message)]
struct FileDescriptors {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ServiceList {
    #[prost(message, repeated, tag = "1")]
    service: Vec<Service>,
}

#[derive(Clone, PartialEq, Message)]
struct Service {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, Message)]
struct ErrorResponse {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

const V1: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const V1ALPHA: &str = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

/// The descriptors of every service `conn`'s server lists (the reflection service's own
/// included, as k6 gets it), their imports first found last; and the duration of a `v1`
/// attempt the server refused, which k6 reports as a `grpc_req_duration` sample.
pub(super) async fn file_descriptors(
    conn: &GrpcConn,
    metadata: &[(String, String)],
    timeout: Duration,
    refused_v1: &mut Option<Duration>,
) -> Result<FileDescriptorSet, String> {
    let list = Request {
        list_services: Some(String::new()),
        ..Request::default()
    };
    let mut path = V1;
    let started = std::time::Instant::now();
    let mut replies = ask(conn, path, metadata, std::slice::from_ref(&list), timeout).await;
    if matches!(&replies, Err((c, _)) if *c == code::UNIMPLEMENTED) {
        *refused_v1 = Some(started.elapsed());
        path = V1ALPHA;
        replies = ask(conn, path, metadata, &[list], timeout).await;
    }
    let replies = replies.map_err(|(_, e)| format!("can't list services: {e}"))?;
    let services: Vec<String> = replies
        .into_iter()
        .filter_map(|r| r.list_services_response)
        .flat_map(|l| l.service.into_iter().map(|s| s.name))
        .collect();
    let mut files: Vec<FileDescriptorProto> = Vec::new();
    let mut wanted: Vec<Request> = services
        .iter()
        .map(|s| Request {
            file_containing_symbol: Some(s.clone()),
            ..Request::default()
        })
        .collect();
    // Each round asks for what the previous ones named but did not send (imports).
    while !wanted.is_empty() {
        let replies = ask(conn, path, metadata, &wanted, timeout)
            .await
            .map_err(|(_, e)| format!("can't get method on service: {e}"))?;
        for (i, r) in replies.into_iter().enumerate() {
            if r.error_response.is_some() {
                let asked = wanted.get(i);
                let name = asked
                    .and_then(|w| {
                        w.file_containing_symbol
                            .as_deref()
                            .or(w.file_by_filename.as_deref())
                    })
                    .unwrap_or_default();
                return Err(
                    match asked.and_then(|w| w.file_containing_symbol.as_deref()) {
                        Some(_) => format!(
                            "can't get method on service {name:?}: Service not found: {name}"
                        ),
                        None => format!("can't get method on service: File not found: {name}"),
                    },
                );
            }
            for raw in r
                .file_descriptor_response
                .into_iter()
                .flat_map(|f| f.file_descriptor_proto)
            {
                let fd = FileDescriptorProto::decode(raw.as_slice())
                    .map_err(|e| format!("can't get method on service: {e}"))?;
                if !files.iter().any(|f| f.name == fd.name) {
                    files.push(fd);
                }
            }
        }
        wanted = files
            .iter()
            .flat_map(|f| f.dependency.iter())
            .filter(|d| !files.iter().any(|f| f.name() == d.as_str()))
            .map(|d| Request {
                file_by_filename: Some(d.clone()),
                ..Request::default()
            })
            .collect();
        wanted.dedup();
    }
    Ok(FileDescriptorSet { file: files })
}

async fn ask(
    conn: &GrpcConn,
    path: &str,
    metadata: &[(String, String)],
    requests: &[Request],
    timeout: Duration,
) -> Result<Vec<Response>, (u32, String)> {
    let frames: Vec<Bytes> = requests.iter().map(|r| r.encode_to_vec().into()).collect();
    let reply = conn
        .exchange(path, metadata, &frames, Some(timeout), usize::MAX)
        .await;
    if reply.code != 0 {
        return Err((
            reply.code,
            format!(
                "rpc error: code = {} desc = {}",
                code::name(reply.code),
                reply.message
            ),
        ));
    }
    reply
        .messages
        .iter()
        .map(|m| Response::decode(m.as_ref()).map_err(|e| (code::INTERNAL, e.to_string())))
        .collect()
}
