//! Which file a request names, as every server of precompress's output
//! decides it: the method, the base, the request path ([`super::path`]),
//! folders and their `index.html`, `/about` for `about.html`, a single-page
//! app's routes, the 404 page, and the names never served (a variant or delta
//! by its own name, the manifest, dot-files). A pure function of the index,
//! the request and a [`Lookup`] that says what is at a key, so `precompress
//! serve`, the tower Service and the unit tests share it; what is then sent
//! for the file is [`super::answer`]'s. negotiate.js's `route` is its port.

use super::path::{parse_request_path, PathError};
use super::{Headers, Index};

/// The request fields the decisions read, by lower-case name: every value of
/// a field, in order, as its bytes.
pub trait Fields {
    /// The values of every field `name` (lower case) the request has.
    fn values(&self, name: &str) -> Vec<&[u8]>;

    /// The value of the first field `name`, if any; a server's map answers
    /// without gathering the others.
    fn first(&self, name: &str) -> Option<&[u8]> {
        self.values(name).into_iter().next()
    }

    /// The value when the request has exactly one field `name`.
    fn one(&self, name: &str) -> Option<&[u8]> {
        match self.values(name)[..] {
            [v] => Some(v),
            _ => None,
        }
    }
}

/// `(name, value)` pairs, names in any case: for tests and servers that
/// hold their headers as strings.
impl<N: AsRef<str>, V: AsRef<str>> Fields for Vec<(N, V)> {
    fn values(&self, name: &str) -> Vec<&[u8]> {
        self.iter()
            .filter(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref().as_bytes())
            .collect()
    }
}

/// A request as the decisions read it.
pub struct Request<'a> {
    /// `GET`, `HEAD`, or another (refused).
    pub method: &'a str,
    /// The request-target's path, raw (not decoded; no query).
    pub path: &'a str,
    /// The query without its `?`, kept on redirects.
    pub query: Option<&'a str>,
    /// Its header fields.
    pub headers: &'a dyn Fields,
}

/// What is at a key under the served folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<F> {
    /// A regular file, with what the lookup hands on for it (`precompress
    /// serve`: its canonical path).
    File(F),
    /// A folder.
    Folder,
    /// Nothing, or nothing that may be served (a link out of the folder).
    Missing,
}

/// How the decisions learn what the served folder holds.
pub trait Lookup {
    /// What the lookup hands on for a file it found.
    type File;
    /// What is at `key` (decoded and checked, `/` separators, no leading `/`).
    fn node(&self, key: &str) -> Node<Self::File>;
    /// Whether `file` is the manifest, which is never served.
    fn is_manifest(&self, file: &Self::File) -> bool;
}

/// A short answer with no file: 301 (`Location`), 400, 404 or 405 (`Allow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The status code.
    pub status: u16,
    /// `Location` or `Allow`, when it has one.
    pub headers: Headers,
    /// A name that exists but is never served (a variant or delta by its
    /// own name, the manifest, a dot-file): a server that passes a miss on to
    /// the next handler must not pass this one.
    pub refused: bool,
}

impl Status {
    fn of(status: u16) -> Status {
        Status {
            status,
            headers: Vec::new(),
            refused: false,
        }
    }

    fn refused() -> Status {
        Status {
            refused: true,
            ..Status::of(404)
        }
    }
}

/// The file a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<F> {
    /// Its key in the manifest (a folder's is its `index.html`).
    pub key: String,
    /// What the lookup found for `key` (the router always asks; a caller
    /// that builds a target itself may not).
    pub file: Option<F>,
    /// 200, or 404 for the 404 page.
    pub status: u16,
}

/// What [`route`] decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route<F> {
    /// Answer this, with no file.
    Status(Status),
    /// Send this file (negotiated, checked and ranged by [`super::answer`]).
    File(Target<F>),
}

/// The page static hosts (and `precompress serve`) send with a 404.
pub const NOT_FOUND_PAGE: &str = "404.html";

/// Which file `req` names under `index`'s base, or the short answer: 405 for
/// a method other than GET and HEAD; 400 for a path [`parse_request_path`]
/// refuses; the 301 that adds a folder's (or the base's) slash; else the
/// file itself, a folder's `index.html`, or what [`fallback`] serves where
/// nothing is (with `spa`, a client-side route's `index.html`), else 404.
pub fn route<L: Lookup>(index: &Index, req: &Request, lookup: &L, spa: bool) -> Route<L::File> {
    if req.method != "GET" && req.method != "HEAD" {
        return Route::Status(Status {
            headers: vec![("Allow", "GET, HEAD".to_string())],
            ..Status::of(405)
        });
    }
    match target(index, req, lookup) {
        Ok(t) => Route::File(t),
        Err(s) if s.status == 404 => match fallback(index, req.path, lookup, spa) {
            Some(t) => Route::File(t),
            None => Route::Status(s),
        },
        Err(s) => Route::Status(s),
    }
}

/// The file the request's path names, or the answer when it names none that
/// is served: 400, 404, or the redirect that adds a folder's slash.
fn target<L: Lookup>(index: &Index, req: &Request, lookup: &L) -> Result<Target<L::File>, Status> {
    let full_path = req.path;
    // Under a base, `/app/x` is the folder's `x`; anything else is not ours.
    let Some(raw_path) = crate::model::path::strip_base(index.base(), full_path) else {
        return Err(Status::of(404));
    };
    if raw_path == "/" && !full_path.ends_with('/') {
        // `/app` is the base's index, whose relative links need the slash.
        return Err(redirect(format!("{full_path}/"), req.query));
    }
    let rp = match parse_request_path(raw_path) {
        Ok(p) => p,
        Err(PathError::Hidden) => return Err(Status::refused()),
        Err(_) => return Err(Status::of(400)),
    };
    let key = rp.key;
    match lookup.node(&key) {
        Node::Folder if !rp.trailing_slash && !key.is_empty() => {
            // Relative links in the index page need the slash. One leading
            // slash: `//docs/` would be a protocol-relative URL, another host.
            let base = index.base();
            let location = format!(
                "{}/{}/",
                &base[..base.len() - 1],
                raw_path.trim_start_matches('/')
            );
            Err(redirect(location, req.query))
        }
        Node::Folder => {
            let key = if key.is_empty() {
                "index.html".into()
            } else {
                format!("{key}/index.html")
            };
            // No listings: a folder without index.html is a 404.
            match lookup.node(&key) {
                Node::File(f) => Ok(Target {
                    key,
                    file: Some(f),
                    status: 200,
                }),
                _ => Err(Status::of(404)),
            }
        }
        Node::File(f) if internal(&key, &f, lookup) => Err(Status::refused()),
        Node::File(f) if !rp.trailing_slash => Ok(Target {
            key,
            file: Some(f),
            status: 200,
        }),
        Node::File(_) | Node::Missing => Err(Status::of(404)),
    }
}

/// What a static host serves for a path the request names nothing at: `about`
/// is `about.html` (nginx's `try_files $uri $uri.html`, Netlify, Cloudflare
/// Pages); with `spa`, a single-page app's route (no `.` in its last
/// segment) is `index.html`; anything else is [`NOT_FOUND_PAGE`] with 404,
/// if there is one. None outside the base, or with none of those files.
pub fn fallback<L: Lookup>(
    index: &Index,
    path: &str,
    lookup: &L,
    spa: bool,
) -> Option<Target<L::File>> {
    let raw = crate::model::path::strip_base(index.base(), path)?;
    let file = |key: &str, status| match lookup.node(key) {
        Node::File(f) if !internal(key, &f, lookup) => Some(Target {
            key: key.to_string(),
            file: Some(f),
            status,
        }),
        _ => None,
    };
    if let Ok(rp) = parse_request_path(raw) {
        let last = rp.key.rsplit('/').next().unwrap_or("");
        let routed = !rp.key.is_empty() && !last.contains('.');
        if routed && !rp.trailing_slash {
            if let Some(t) = file(&format!("{}.html", rp.key), 200) {
                return Some(t);
            }
        }
        if spa && (routed || rp.key.is_empty()) {
            if let Some(t) = file("index.html", 200) {
                return Some(t);
            }
        }
    }
    file(NOT_FOUND_PAGE, 404)
}

/// Files a production server does not serve by their own name: a variant or
/// delta beside its asset (sent only through negotiation, with the asset's
/// type and `Content-Encoding`), and the manifest (it lists every asset with
/// its hash; a preview should not publish what production would not).
fn internal<L: Lookup>(key: &str, file: &L::File, lookup: &L) -> bool {
    let beside_its_asset = |src: &str| matches!(lookup.node(src), Node::File(_));
    crate::model::content::variant_source(key).is_some_and(|(src, _)| beside_its_asset(src))
        || crate::model::names::delta_source(key).is_some_and(|(src, _)| beside_its_asset(src))
        || lookup.is_manifest(file)
}

/// A 301 to `location`, the request's query kept.
fn redirect(mut location: String, query: Option<&str>) -> Status {
    if let Some(q) = query {
        location = format!("{location}?{q}");
    }
    Status {
        headers: vec![("Location", location)],
        ..Status::of(301)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// A folder as lists of files and folders.
    struct Listed {
        files: BTreeSet<String>,
        folders: BTreeSet<String>,
        manifest: String,
    }

    impl Lookup for Listed {
        type File = String;

        fn node(&self, key: &str) -> Node<String> {
            if self.files.contains(key) {
                Node::File(key.to_string())
            } else if key.is_empty() || self.folders.contains(key) {
                Node::Folder
            } else {
                Node::Missing
            }
        }

        fn is_manifest(&self, file: &String) -> bool {
            *file == self.manifest
        }
    }

    /// `fixtures/routes.json`, also run by `node --test` on negotiate.js's
    /// `route` and on the CloudFront function.
    #[test]
    fn routes_table() {
        let t = crate::serve::tables::routes();
        let strings = |v: &serde_json::Value| -> BTreeSet<String> {
            let items = v.as_array().unwrap().iter();
            items.map(|s| s.as_str().unwrap().to_string()).collect()
        };
        let files = strings(&t["files"]);
        let mut folders = strings(&t["folders"]);
        for f in &files {
            let mut at = 0;
            while let Some(i) = f[at..].find('/') {
                folders.insert(f[..at + i].to_string());
                at += i + 1;
            }
        }
        let listed = Listed {
            files,
            folders,
            manifest: t["manifest"].as_str().unwrap().to_string(),
        };
        let cases = t["cases"].as_array().unwrap();
        assert!(cases.len() >= 40, "{} rows", cases.len());
        for c in cases {
            let mut index = Index::default();
            index.set_base(c["base"].as_str().unwrap_or("/"));
            let headers: Vec<(&str, &str)> = Vec::new();
            let req = Request {
                method: c["method"].as_str().unwrap_or("GET"),
                path: c["path"].as_str().unwrap(),
                query: c["query"].as_str(),
                headers: &headers,
            };
            let spa = c["spa"].as_bool().unwrap_or(false);
            let want = &c["want"];
            let status = want["status"].as_u64().unwrap() as u16;
            match route(&index, &req, &listed, spa) {
                Route::File(got) => {
                    assert_eq!(Some(got.key.as_str()), want["file"].as_str(), "row {c}");
                    assert_eq!(got.status, status, "row {c}");
                }
                Route::Status(got) => {
                    assert!(want["file"].is_null(), "row {c}: {got:?}");
                    assert_eq!(got.status, status, "row {c}");
                    let location = got.headers.iter().find(|(n, _)| *n == "Location");
                    assert_eq!(
                        location.map(|(_, v)| v.as_str()),
                        want["location"].as_str(),
                        "row {c}"
                    );
                }
            }
        }
    }
}
