//! `GET /`: the viewer page, plain HTML, CSS and JavaScript built into the binary. It
//! draws every board from the live event stream.

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

/// `GET /`
pub async fn page() -> Html<&'static str> {
    Html(include_str!("../../web/index.html"))
}

/// `GET /viewer.js`
pub async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../../web/viewer.js"),
    )
        .into_response()
}

/// `GET /viewer.css`
pub async fn style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../web/viewer.css"),
    )
        .into_response()
}
