//! Launchers for the servers beside nginx and Caddy (whose launchers are in
//! the parent module): Apache httpd with `precompress apache-map`, and the
//! servers that send precompressed siblings with lines of their own (h2o,
//! lighttpd, static-web-server). Each takes a config template from `e2e/`,
//! fills in its port and folders, checks it with the server's own check, and
//! starts the server in the foreground on 127.0.0.1, killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{free_port, need, ready, repo, Server};

/// The program at `path` if it is there, else `name` on the PATH (checked by
/// [`need`]).
fn program(path: &str, name: &str) -> PathBuf {
    if Path::new(path).is_file() {
        return path.into();
    }
    need(name);
    name.into()
}

/// Running as root: the server's workers then run as another user, who must
/// read the site (a temp folder is private to its owner).
fn root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// Opens `dir` and its parents up to the temp folder to everyone (read and
/// traverse), as a web root is: a test's temp folder is 0700.
pub fn readable_by_servers(dir: &Path) {
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let mut d = std::fs::canonicalize(dir).unwrap();
    while d.starts_with(&tmp) && d != tmp {
        let st = Command::new("chmod").arg("a+rX").arg(&d).status().unwrap();
        assert!(st.success());
        d = d.parent().unwrap().to_path_buf();
    }
}

/// `template` from `e2e/` with each `(placeholder, value)` filled in.
fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut conf = std::fs::read_to_string(repo().join("e2e").join(template)).unwrap();
    for (placeholder, value) in vars {
        conf = conf.replace(placeholder, value);
    }
    assert!(
        !conf.contains("@PORT@") && !conf.contains("@ROOT@"),
        "{template}: placeholders left"
    );
    conf
}

/// How a server is started from a config template of `e2e/`.
struct Launch {
    name: &'static str,
    program: PathBuf,
    /// The template, also the name of the filled-in config under `work/NAME`.
    template: &'static str,
    /// The flag that names the config file (`-f`, `-c`).
    config_flag: &'static str,
    /// The server's own check of a config, and its foreground flags.
    check: &'static [&'static str],
    foreground: &'static [&'static str],
    /// Its stderr left out (a server that logs every request there).
    quiet: bool,
}

/// Fills in the template (`@PORT@`, and what `vars` gives for the run folder
/// `work/NAME`), checks the config with the server's own check (so a bad one
/// fails with the server's message), and starts it in the foreground.
fn launch(
    l: Launch,
    work: &Path,
    vars: impl FnOnce(&Path) -> Vec<(&'static str, String)>,
) -> Server {
    let port = free_port();
    let run = work.join(l.name);
    std::fs::create_dir_all(&run).unwrap();
    let mut filled = vars(&run);
    filled.push(("@PORT@", port.to_string()));
    let pairs: Vec<(&str, &str)> = filled.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let file = run.join(l.template);
    std::fs::write(&file, fill(l.template, &pairs)).unwrap();
    let out = Command::new(&l.program)
        .args(l.check)
        .arg(l.config_flag)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {} {} {}: {}{}",
        l.name,
        l.check.join(" "),
        l.config_flag,
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let child = Command::new(&l.program)
        .args(l.foreground)
        .arg(l.config_flag)
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(if l.quiet {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .unwrap();
    ready(Server {
        name: l.name,
        addr: ([127, 0, 0, 1], port).into(),
        child,
        log: Default::default(),
    })
}

/// Apache httpd with `e2e/apache.conf`: Debian's stock modules and the
/// generated `config` included, serving `site`, its pid file, lock and log
/// under `work/apache`. `apache2 -t` checks the config first, so a bad one
/// fails with Apache's message.
pub fn start_apache(site: &Path, config: &Path, work: &Path) -> Server {
    let user = if root() {
        readable_by_servers(site);
        readable_by_servers(config.parent().unwrap());
        "User www-data\nGroup www-data"
    } else {
        ""
    };
    launch(
        Launch {
            name: "apache",
            program: program("/usr/sbin/apache2", "apache2"),
            template: "apache.conf",
            config_flag: "-f",
            check: &["-t"],
            foreground: &["-D", "FOREGROUND"],
            quiet: false,
        },
        work,
        |run| {
            vec![
                ("@ROOT@", site.display().to_string()),
                ("@RUN@", run.display().to_string()),
                ("@CONFIG@", config.display().to_string()),
                ("@USER@", user.to_string()),
            ]
        },
    )
}

/// Apache's error log under `work` (what a failing test shows).
pub fn apache_log(work: &Path) -> String {
    std::fs::read_to_string(work.join("apache/error.log")).unwrap_or_default()
}

/// A graceful restart of the Apache started by [`start_apache`] (it re-reads
/// its config and the included file), returning once the new generation is
/// up (its "resuming normal operations" line is in the log).
pub fn reload_apache(server: &Server, work: &Path) {
    let resumed = |log: &str| log.matches("resuming normal operations").count();
    let before = resumed(&apache_log(work));
    let st = Command::new("kill")
        .args(["-USR1", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    for _ in 0..300 {
        if resumed(&apache_log(work)) > before {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("apache did not restart: {}", apache_log(work));
}

/// Dates every file under `dir` a minute back: Apache makes a file's ETag
/// weak while its mtime is within the last second (it may still be being
/// written), which a test that has just built the folder would otherwise see.
pub fn settle_mtimes(dir: &Path) {
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            settle_mtimes(&p);
        } else {
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(past).unwrap();
        }
    }
}

/// h2o with `e2e/h2o.conf` (`file.send-compressed: ON`) serving `site`, its
/// log under `work/h2o`; `h2o -t` checks the config first.
pub fn start_h2o(site: &Path, work: &Path) -> Server {
    let user = if root() {
        readable_by_servers(site);
        "user: www-data"
    } else {
        ""
    };
    launch(
        Launch {
            name: "h2o",
            program: program("/usr/bin/h2o", "h2o"),
            template: "h2o.conf",
            config_flag: "-c",
            check: &["-t"],
            foreground: &[],
            quiet: true,
        },
        work,
        |run| {
            vec![
                ("@ROOT@", site.display().to_string()),
                ("@RUN@", run.display().to_string()),
                ("@USER@", user.to_string()),
            ]
        },
    )
}

/// lighttpd with `e2e/lighttpd.conf` and `e2e/lighttpd-siblings.lua`
/// (mod_magnet) serving `site`; `lighttpd -tt` checks the config (and loads
/// the modules) first.
pub fn start_lighttpd(site: &Path, work: &Path) -> Server {
    let module = "/usr/lib/lighttpd/mod_magnet.so";
    assert!(
        Path::new(module).is_file(),
        "{module} missing: run `bash .ci/e2e.sh` (lighttpd-modules-lua)"
    );
    let user = if root() {
        readable_by_servers(site);
        "server.username = \"www-data\"\nserver.groupname = \"www-data\""
    } else {
        ""
    };
    let script = repo().join("e2e/lighttpd-siblings.lua");
    launch(
        Launch {
            name: "lighttpd",
            program: program("/usr/sbin/lighttpd", "lighttpd"),
            template: "lighttpd.conf",
            config_flag: "-f",
            check: &["-tt"],
            foreground: &["-D"],
            quiet: false,
        },
        work,
        |_| {
            vec![
                ("@ROOT@", site.display().to_string()),
                ("@SCRIPT@", script.display().to_string()),
                ("@USER@", user.to_string()),
            ]
        },
    )
}

/// static-web-server with `--compression-static` (its precompressed files)
/// and no compression of its own, serving `site`. Not installed by
/// `.ci/e2e.sh` (crates.io has only its source: `cargo install
/// static-web-server`); `STATIC_WEB_SERVER` may name the binary.
pub fn start_static_web_server(site: &Path) -> Server {
    let sws = std::env::var_os("STATIC_WEB_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| program("/usr/local/bin/static-web-server", "static-web-server"));
    let port = free_port();
    let child = Command::new(&sws)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--root")
        .arg(site)
        .args(["--compression-static", "true", "--compression", "false"])
        .args(["--log-level", "error"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", sws.display()));
    ready(Server {
        name: "static-web-server",
        addr: ([127, 0, 0, 1], port).into(),
        child,
        log: Default::default(),
    })
}

/// Release 2 of [`two_releases`](super::two_releases) with its deltas, served
/// by Apache from `precompress apache-map --htaccess` as the folder's
/// `.htaccess` (the server's configuration includes nothing of it).
pub fn deploy_apache_htaccess() -> super::Deployed {
    let (tmp, live, r1, old_js, new_js) = super::release_two_with_deltas();
    let out = super::precompress(&[
        "apache-map".as_ref(),
        "--htaccess".as_ref(),
        live.as_os_str(),
    ]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(live.join(".htaccess"), &out.stdout).unwrap();
    let nothing = tmp.path().join("nothing.conf");
    std::fs::write(&nothing, "").unwrap();
    settle_mtimes(&live);
    let server = start_apache(&live, &nothing, tmp.path());
    super::Deployed {
        old: std::fs::read(r1.join(old_js)).unwrap(),
        url: format!("/{new_js}"),
        asset: super::manifest(&live)["files"][new_js].clone(),
        server,
        live,
        _tmp: tmp,
    }
}
