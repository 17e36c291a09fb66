//! Descriptors for a client: `.proto` files compiled in-process (protox, no protoc) or a
//! protoset, and the methods they define as `load()` lists them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use prost::Message;
use prost_reflect::prost_types::FileDescriptorSet;
use prost_reflect::{DescriptorPool, MethodDescriptor};

/// A method as `load()` returns it to the script.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MethodInfo {
    pub(super) package: String,
    pub(super) service: String,
    pub(super) full_method: String,
    pub(super) name: String,
    pub(super) client_streaming: bool,
    pub(super) server_streaming: bool,
}

/// Reads a file of the test (from the disk or the test's archive).
pub(super) type ReadFile = Arc<dyn Fn(&Path) -> std::io::Result<Arc<[u8]>> + Send + Sync>;

/// Compiles `files` found in `import_paths` (with their imports and the well-known types),
/// reading every `.proto` through `read`, so that an archive holds them and a run from it
/// finds them there.
pub(super) fn compile(
    import_paths: &[PathBuf],
    files: &[String],
    read: ReadFile,
) -> Result<FileDescriptorSet, String> {
    let mut resolver = protox::file::ChainFileResolver::new();
    for dir in import_paths {
        resolver.add(TestFiles {
            include: dir.clone(),
            read: read.clone(),
        });
    }
    resolver.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    for f in files {
        compiler
            .open_file(Path::new(f))
            .map_err(|e| e.to_string())?;
    }
    Ok(compiler.file_descriptor_set())
}

/// One import path, searched through the test's file source.
struct TestFiles {
    include: PathBuf,
    read: ReadFile,
}

impl protox::file::FileResolver for TestFiles {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.include).ok()?;
        let parts: Option<Vec<&str>> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(p) => p.to_str(),
                _ => None,
            })
            .collect();
        parts.filter(|p| !p.is_empty()).map(|p| p.join("/"))
    }

    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        let bytes = (self.read)(&self.include.join(name)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                protox::Error::file_not_found(name)
            } else {
                protox::Error::new(e)
            }
        })?;
        let text = std::str::from_utf8(&bytes).map_err(protox::Error::new)?;
        protox::file::File::from_source(name, text)
    }
}

/// A protoset file's bytes (a serialized `FileDescriptorSet`).
pub(super) fn decode_protoset(bytes: &[u8]) -> Result<FileDescriptorSet, String> {
    FileDescriptorSet::decode(bytes).map_err(|e| format!("couldn't unmarshal protoset file: {e}"))
}

/// Adds `set` to `pool` (files it already has are kept) and returns the methods of the
/// files in `set`, in file then declaration order.
pub(super) fn add(
    pool: &mut DescriptorPool,
    set: FileDescriptorSet,
) -> Result<Vec<MethodInfo>, String> {
    let names: Vec<String> = set.file.iter().map(|f| f.name().to_owned()).collect();
    let fresh: Vec<_> = set
        .file
        .into_iter()
        .filter(|f| pool.get_file_by_name(f.name()).is_none())
        .collect();
    pool.add_file_descriptor_protos(fresh)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for name in names {
        let Some(file) = pool.get_file_by_name(&name) else {
            continue;
        };
        for service in file.services() {
            for method in service.methods() {
                out.push(MethodInfo {
                    package: file.package_name().to_owned(),
                    service: service.name().to_owned(),
                    full_method: format!("/{}/{}", service.full_name(), method.name()),
                    name: method.name().to_owned(),
                    client_streaming: method.is_client_streaming(),
                    server_streaming: method.is_server_streaming(),
                });
            }
        }
    }
    Ok(out)
}

/// The method `/pkg.Service/Method` (leading slash optional) of `pool`.
pub(super) fn method(pool: &DescriptorPool, name: &str) -> Option<MethodDescriptor> {
    let name = name.strip_prefix('/').unwrap_or(name);
    let (service, method) = name.split_once('/')?;
    pool.get_service_by_name(service)?
        .methods()
        .find(|m| m.name() == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_with_imports_and_well_known_types() {
        let dir = std::env::temp_dir().join(format!("rk6-grpc-proto-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("sub/common.proto"),
            "syntax = \"proto3\"; package common; message Note { string text = 1; }",
        )
        .unwrap();
        std::fs::write(
            dir.join("svc.proto"),
            "syntax = \"proto3\"; package demo; import \"sub/common.proto\"; \
             import \"google/protobuf/timestamp.proto\"; \
             message Req { common.Note note = 1; google.protobuf.Timestamp at = 2; } \
             service Demo { rpc Say(Req) returns (common.Note); rpc Stream(stream Req) returns (stream common.Note); }",
        )
        .unwrap();
        let read: ReadFile = Arc::new(|p: &Path| std::fs::read(p).map(Arc::from));
        let set = compile(
            std::slice::from_ref(&dir),
            &["svc.proto".to_owned()],
            read.clone(),
        )
        .unwrap();
        let mut pool = DescriptorPool::new();
        let methods = add(&mut pool, set.clone()).unwrap();
        assert_eq!(
            methods
                .iter()
                .map(|m| m.full_method.as_str())
                .collect::<Vec<_>>(),
            ["/demo.Demo/Say", "/demo.Demo/Stream"]
        );
        assert_eq!(methods[0].package, "demo");
        assert_eq!(methods[0].service, "Demo");
        assert!(method(&pool, "demo.Demo/Say").is_some());
        assert!(method(&pool, "/demo.Demo/Nope").is_none());
        // Loading the same files again adds nothing and fails on nothing.
        assert_eq!(add(&mut pool, set).unwrap().len(), 2);
        let missing = compile(std::slice::from_ref(&dir), &["nope.proto".to_owned()], read);
        assert!(missing.is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
