//! Every route of [`super::routes`] tried for the token: a call that can change anything
//! answers 401 without the right token and changes nothing; reading needs no token.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use hyper::service::Service as _;
use hyper_util::service::TowerToHyperService;

use super::{App, Router, router, routes};
use crate::output::control::BoardControl;
use crate::output::hub::Hub;
use crate::output::round::Round;

const TOKEN: &str = "0123456789abcdef";

/// The calls that change something, the only ones the token guards. A route added with
/// another method than GET must be added here, and answers 401 only if its handler takes
/// the `Operator` extractor.
const GUARDED: [(Method, &str); 6] = [
    (Method::PUT, "/api/round"),
    (Method::PUT, "/api/boards/{id}/players"),
    (Method::POST, "/api/boards/{id}/result"),
    (Method::POST, "/api/boards/{id}/accept"),
    (Method::POST, "/api/boards/{id}/setup"),
    (Method::POST, "/api/boards/{id}/resolve"),
];

/// Every method but GET (and HEAD, which axum answers as GET).
const CHANGING: [Method; 4] = [Method::POST, Method::PUT, Method::PATCH, Method::DELETE];

/// A path of `route` with its parameters filled in: board 1, its first game.
fn concrete(route: &str) -> String {
    route.replace("{id}", "1").replace("{file}", "1.pgn")
}

/// The status `router` answers a call with a small JSON body, with `token` if given.
async fn status(router: &Router, method: Method, path: &str, token: Option<&str>) -> StatusCode {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(Body::from("{}")).expect("request");
    let service = TowerToHyperService::new(router.clone());
    service.call(request).await.expect("response").status()
}

/// What the API shows of the boards and the round.
fn state(hub: &Hub) -> serde_json::Value {
    serde_json::json!({ "boards": hub.views(), "round": hub.round() })
}

#[tokio::test]
async fn every_call_that_changes_anything_needs_the_token() {
    let hub = Arc::new(Hub::new(&[PathBuf::from("/dev/board1")], Round::default()));
    let router = router(App {
        hub: hub.clone(),
        control: BoardControl::default(),
        token: Some(TOKEN.into()),
    });
    let before = state(&hub);
    // The wrong token has the right length too: the comparison must look at the bytes.
    let refused = [None, Some("wrong"), Some("0123456789abcdeF")];
    for (route, _) in routes() {
        let path = concrete(route);
        for method in CHANGING {
            let want = match GUARDED.contains(&(method.clone(), route)) {
                true => StatusCode::UNAUTHORIZED,
                false => StatusCode::METHOD_NOT_ALLOWED,
            };
            for token in refused {
                let got = status(&router, method.clone(), &path, token).await;
                assert_eq!(got, want, "{method} {route} with token {token:?}");
            }
        }
        // Reading needs no token (405 where the route only changes things).
        let got = status(&router, Method::GET, &path, None).await;
        assert_ne!(got, StatusCode::UNAUTHORIZED, "GET {route} without a token");
    }
    assert_eq!(state(&hub), before, "a refused call changed something");
    // With the token the same calls get past the guard (to the boards, which this test
    // does not run).
    for (method, route) in GUARDED {
        let got = status(&router, method.clone(), &concrete(route), Some(TOKEN)).await;
        assert_ne!(
            got,
            StatusCode::UNAUTHORIZED,
            "{method} {route} with the token"
        );
    }
}
