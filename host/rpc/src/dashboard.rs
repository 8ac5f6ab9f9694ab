//! The dashboard (#33): a read-only page at the root of the RPC address,
//! every asset embedded in the binary. `GET /` (and `GET /assets/…`) is
//! answered here; every other request — the JSON-RPC `POST /` the page
//! itself sends — goes on to the JSON-RPC server. The page reads the chain
//! only through JSON-RPC methods (docs/RPC.md), polling for new blocks.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use jsonrpsee::core::BoxError;
use jsonrpsee::server::{HttpBody, HttpRequest, HttpResponse};
use tower::{Layer, Service};

/// One embedded file: its path under `/`, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../dashboard/index.html"),
    },
    Asset {
        path: "/assets/app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../dashboard/app.js"),
    },
    Asset {
        path: "/assets/app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../dashboard/app.css"),
    },
    Asset {
        path: "/assets/uPlot.iife.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../dashboard/vendor/uPlot.iife.min.js"),
    },
    Asset {
        path: "/assets/uPlot.min.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../dashboard/vendor/uPlot.min.css"),
    },
];

/// The embedded file a `GET` of `path` answers with (`/index.html` is `/`).
fn asset(path: &str) -> Option<&'static Asset> {
    let path = if path == "/index.html" { "/" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}

/// Adds the dashboard in front of the JSON-RPC service.
#[derive(Clone, Copy, Debug, Default)]
pub struct DashboardLayer;

impl<S> Layer<S> for DashboardLayer {
    type Service = Dashboard<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Dashboard { inner }
    }
}

/// Answers `GET` of the dashboard's files, passes everything else on.
#[derive(Clone, Debug)]
pub struct Dashboard<S> {
    inner: S,
}

impl<S> Service<HttpRequest> for Dashboard<S>
where
    S: Service<HttpRequest, Response = HttpResponse>,
    S::Error: Into<BoxError> + 'static,
    S::Future: Send + 'static,
{
    type Response = HttpResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, BoxError>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: HttpRequest) -> Self::Future {
        // A WebSocket upgrade of the root is JSON-RPC (`th_subscribe`),
        // not a page.
        let upgrade = req
            .headers()
            .get("upgrade")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
        let found = (req.method().as_str() == "GET" && !upgrade)
            .then(|| asset(req.uri().path()))
            .flatten();
        match found {
            Some(a) => {
                let response = HttpResponse::builder()
                    .status(200)
                    .header("content-type", a.content_type)
                    .header("cache-control", "no-cache")
                    .header("x-content-type-options", "nosniff")
                    .body(HttpBody::from(a.bytes.to_vec()))
                    .map_err(BoxError::from);
                Box::pin(async move { response })
            }
            None => {
                let fut = self.inner.call(req);
                Box::pin(async move { fut.await.map_err(Into::into) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_embedded_and_the_root_is_the_page() {
        assert!(std::str::from_utf8(asset("/").unwrap().bytes)
            .unwrap()
            .contains("timerhost"));
        assert_eq!(asset("/index.html").unwrap().path, "/");
        assert!(asset("/assets/app.js").is_some());
        assert!(asset("/etc/passwd").is_none());
        assert!(asset("/assets/../Cargo.toml").is_none());
    }

    /// The vendored chart library is exactly the pinned release
    /// (`dashboard/vendor/README.md`).
    #[test]
    fn the_vendored_chart_library_is_the_pinned_one() {
        use sha2::Digest;
        let sha256 = |bytes: &[u8]| hex::encode(sha2::Sha256::digest(bytes));
        assert_eq!(
            sha256(asset("/assets/uPlot.iife.min.js").unwrap().bytes),
            "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f"
        );
        assert_eq!(
            sha256(asset("/assets/uPlot.min.css").unwrap().bytes),
            "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04"
        );
    }
}
