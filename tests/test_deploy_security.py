"""Issue 59, security beside it: the deployment files as they are rendered. docker-compose.yml with its
variables filled in, deploy/kubernetes/*.yaml document by document, and the PostgreSQL settings that
deploy/postgres/secure.sh writes for a server that Slurm or Kubernetes workers reach from other machines
(deploy/slurm/harness.sbatch's clients) show that no service answers without a password, that PostgreSQL
checks passwords as scram-sha-256 and, where connections cross machines, needs TLS. Two real servers
confirm it: compose's PostgreSQL set up as the postgres image would set it up, and a PostgreSQL with
secure.sh's settings and a certificate of a throw-away CA."""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.credentials import password_in
from tests.services import REPO, SECRETS, Postgres, interpolate, postgres_missing

COMPOSE_TEXT = (REPO / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
KUBERNETES = {path.name: list(yaml.safe_load_all(path.read_text()))
              for path in sorted((REPO / "deploy/kubernetes").glob("*.yaml"))}  # fmt: skip
SECURE = REPO / "deploy/postgres/secure.sh"
SBATCH = REPO / "deploy/slurm/harness.sbatch"
ENV = {**SECRETS, "POSTGRES_PASSWORD": "test-postgres-password-31d4"}
TLS_MODES = {"require", "verify-ca", "verify-full"}
needs_postgres = pytest.mark.skipif(postgres_missing() is not None, reason=str(postgres_missing()))


def _render(value: Any, env: dict[str, str]) -> Any:
    """A compose value with every `${...}` filled in from `env`, as `docker compose config` would."""
    if isinstance(value, dict):
        return {key: _render(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, env) for item in value]
    return interpolate(value, env) if isinstance(value, str) else value


SERVICES = _render(COMPOSE, ENV)["services"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


# --- docker-compose.yml ------------------------------------------------------------------------------------


def _authenticated(name: str, service: dict) -> bool:
    """Whether a compose service asks every request for an account: MLflow's basic-auth app with its admin
    password, or `harness dashboard` with its password."""
    command, env = [str(part) for part in service.get("command", [])], service.get("environment", {})
    if command[:2] == ["mlflow", "server"]:
        return command[command.index("--app-name") + 1] == "basic-auth" and bool(
            env.get("MLFLOW_AUTH_ADMIN_PASSWORD")
        )
    if command[:2] == ["harness", "dashboard"]:
        return bool(env.get("HARNESS_DASHBOARD_PASSWORD"))
    return False


def test_compose_publishes_ports_only_of_services_with_authentication() -> None:
    """Every published port binds 127.0.0.1 or belongs to a service that asks for a password (MLflow's and
    the dashboard's both do, so either may be opened); PostgreSQL publishes none."""
    published = {name: service["ports"] for name, service in SERVICES.items() if service.get("ports")}
    assert set(published) == {"mlflow", "dashboard"}
    assert all(_authenticated(name, SERVICES[name]) for name in published)
    for name, ports in published.items():
        for port in ports:
            address = str(port).split(":")[0] if str(port).count(":") == 2 else "0.0.0.0"
            assert address == "127.0.0.1" or _authenticated(name, SERVICES[name]), (name, port)
    assert "ports" not in COMPOSE["services"]["postgres"] and "expose" not in COMPOSE["services"]["postgres"]


def test_compose_runs_the_dashboard_with_its_password() -> None:
    """`harness dashboard --host 0.0.0.0` with HARNESS_DASHBOARD_PASSWORD from the required
    DASHBOARD_PASSWORD; the command's own check accepts that environment and refuses it without the
    password."""
    from harness.commands.dashboard import PASSWORD, account
    from harness.errors import HarnessError

    dashboard = SERVICES["dashboard"]
    command = dashboard["command"]
    assert command[:2] == ["harness", "dashboard"] and "optuna-dashboard" not in command
    host = command[command.index("--host") + 1]
    assert dashboard["environment"][PASSWORD] == SECRETS["DASHBOARD_PASSWORD"]
    assert COMPOSE["services"]["dashboard"]["environment"][PASSWORD].startswith("${DASHBOARD_PASSWORD:?")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PASSWORD, dashboard["environment"][PASSWORD])
        patch.setenv("HARNESS_DASHBOARD_USERNAME", dashboard["environment"]["HARNESS_DASHBOARD_USERNAME"])
        assert account(host) == ("admin", SECRETS["DASHBOARD_PASSWORD"])
        patch.delenv(PASSWORD)
        with pytest.raises(HarnessError):
            account(host)
    with pytest.raises(KeyError, match="DASHBOARD_PASSWORD"):  # required: compose stops without it
        _render(COMPOSE, {k: v for k, v in ENV.items() if k != "DASHBOARD_PASSWORD"})


def test_compose_postgres_checks_every_connection_with_scram() -> None:
    postgres = SERVICES["postgres"]
    command, env = postgres["command"], postgres["environment"]
    options = [command[i + 1] for i, part in enumerate(command) if part == "-c"]
    assert "password_encryption=scram-sha-256" in options
    assert env["POSTGRES_HOST_AUTH_METHOD"] == "scram-sha-256"
    initdb = shlex.split(env["POSTGRES_INITDB_ARGS"])
    assert "--auth-host=scram-sha-256" in initdb and "--auth-local=scram-sha-256" in initdb
    assert not [a for a in initdb if a.startswith(("--auth", "-A")) and not a.endswith("=scram-sha-256")]
    assert not [s for s in _strings(COMPOSE["services"]["postgres"]) if re.search(r"\b(trust|md5)\b", s)]


def test_compose_file_holds_no_password() -> None:
    """Every password, secret key and database URL in the file: a required variable, never a literal or a
    default; no URL carries a password; the test's secrets appear only after rendering."""
    raw = COMPOSE
    blocks = [raw["x-environment"], *(service.get("environment", {}) for service in raw["services"].values())]
    names = [(k, v) for block in blocks for k, v in block.items()]
    secret_names = [(k, v) for k, v in names if re.search("PASSWORD|SECRET|TOKEN", k)]
    assert len(secret_names) >= 6
    for name, value in secret_names:
        assert re.fullmatch(r"\$\{\w+:\?[^}]+\}", str(value)), (name, value)
    assert not [s for s in _strings(raw) if password_in(s)]
    assert not [s for s in _strings(raw) if re.search(r"(?i)password\s*[=:]\s*\w", s)]
    for secret in ENV.values():
        assert secret not in COMPOSE_TEXT and secret in str(SERVICES)
    ini = configparser.ConfigParser()
    ini.read(REPO / "deploy/mlflow/basic_auth.ini")
    assert not [key for key in ini["mlflow"] if "password" in key]
    assert not password_in(ini["mlflow"]["database_uri"])


@pytest.mark.slow
@needs_postgres
def test_compose_postgres_refuses_connections_without_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PostgreSQL 15 initialised as the postgres image initialises it from the rendered compose service
    (initdb with POSTGRES_INITDB_ARGS and the password, the image's `host all all all METHOD` line, the
    command's -c settings): without the password, over TCP or the Unix socket, and with a wrong one it
    refuses; with it it answers, and the password is stored as a SCRAM-SHA-256 verifier."""
    import psycopg2

    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    service = SERVICES["postgres"]
    env, command = service["environment"], service["command"]
    server = Postgres(env["POSTGRES_USER"], password=env["POSTGRES_PASSWORD"])
    try:
        secret = server.root / "pwfile"
        secret.write_text(env["POSTGRES_PASSWORD"])
        shutil.chown(secret, "postgres") if server.as_postgres else None
        data = server.root / "data"
        server._run(str(server.bin / "initdb"), "-D", str(data), "-U", env["POSTGRES_USER"],
                    f"--pwfile={secret}", *shlex.split(env["POSTGRES_INITDB_ARGS"]))  # fmt: skip
        with open(data / "pg_hba.conf", "a") as hba:  # the image's pg_setup_hba_conf
            hba.write(f"\nhost all all all {env['POSTGRES_HOST_AUTH_METHOD']}\n")
        settings = [command[i + 1] for i, part in enumerate(command) if part == "-c"]
        with open(data / "postgresql.conf", "a") as conf:
            conf.writelines(f"{line.split('=')[0]} = '{line.split('=', 1)[1]}'\n" for line in settings)
        server.start_server()
        tcp = {"host": "127.0.0.1", "port": server.port, "user": server.user, "dbname": "postgres"}
        socket = {**tcp, "host": str(server.root)}
        for attempt, message in [
            (tcp, "no password supplied"),
            (socket, "no password supplied"),
            ({**tcp, "password": "not-the-password"}, "password authentication failed"),
        ]:
            with pytest.raises(psycopg2.OperationalError, match=message):
                psycopg2.connect(**attempt, connect_timeout=10)
        with psycopg2.connect(**tcp, password=env["POSTGRES_PASSWORD"], connect_timeout=10) as connection:
            cursor = connection.cursor()
            cursor.execute("SHOW password_encryption")
            assert cursor.fetchone() == ("scram-sha-256",)
            cursor.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (server.user,))
            assert cursor.fetchone()[0].startswith("SCRAM-SHA-256$")
            cursor.execute("SELECT type, auth_method FROM pg_hba_file_rules")
            methods = {method for _, method in cursor.fetchall()}
        assert methods == {"scram-sha-256"}  # no trust, md5, password or peer line left
    finally:
        server.stop()


# --- deploy/kubernetes ----------------------------------------------------------------------------------


def _documents(kind: str) -> list[dict]:
    return [doc for docs in KUBERNETES.values() for doc in docs if doc["kind"] == kind]


def _pod_templates() -> list[dict]:
    return [doc["spec"]["template"] for doc in _documents("Job") + _documents("Deployment")]


def _selects(selector: dict, labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels, matchExpressions) applied to a pod's labels."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for rule in selector.get("matchExpressions", []):
        key, operator, values = rule["key"], rule["operator"], rule.get("values", [])
        found = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not found:
            return False
    return True


def _pod(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/part-of": "harness", "app.kubernetes.io/component": component}


def test_kubernetes_storage_urls_require_tls_with_the_ca_from_a_secret() -> None:
    """Every PostgreSQL URL a pod gets carries sslmode=verify-full and a sslrootcert that is the ca.crt of
    the Secret harness-postgres-ca mounted in that pod; the harness opens such a URL as given."""
    from sqlalchemy.engine import make_url

    from harness.fleet.steady_storage import connect_args
    from harness.places import with_driver

    urls = 0
    for template in _pod_templates():
        spec = template["spec"]
        volumes = {volume["name"]: volume for volume in spec["volumes"]}
        for container in spec["containers"]:
            mounts = {m["mountPath"]: volumes[m["name"]] for m in container.get("volumeMounts", [])}
            for url in [arg for arg in container["command"] if str(arg).startswith("postgres")]:
                urls += 1
                query = make_url(url).query
                assert query.get("sslmode") == "verify-full", url
                folder, _, name = query["sslrootcert"].rpartition("/")
                secret = mounts[folder]["secret"]
                assert secret["secretName"] == "harness-postgres-ca"
                assert {"key": "ca.crt", "path": name} in secret["items"]
                assert with_driver(url) == url and not {"sslmode", "sslrootcert"} & set(connect_args(url))
            env = {e["name"]: e for e in container.get("env", [])}
            assert env.get("PGSSLMODE", {}).get("value", "verify-full") in TLS_MODES
    assert urls == 3  # the coordinator, the workers, the dashboard


def test_kubernetes_credentials_come_from_secrets() -> None:
    """No password in any document: every credential variable is a secretKeyRef, no URL holds a password,
    the dashboard's account is the Secret harness-dashboard's."""
    for name, docs in KUBERNETES.items():
        assert not [s for s in _strings(docs) if password_in(s)], name
    for template in _pod_templates():
        for container in template["spec"]["containers"]:
            for variable in container.get("env", []):
                if re.search("PASSWORD|USERNAME|SECRET|TOKEN", variable["name"]):
                    assert "value" not in variable and "secretKeyRef" in variable["valueFrom"], variable
    (dashboard,) = _documents("Deployment")
    (container,) = dashboard["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    assert command[:2] == ["harness", "dashboard"] and command[command.index("--host") + 1] == "0.0.0.0"
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
    assert env["HARNESS_DASHBOARD_PASSWORD"] == {"name": "harness-dashboard", "key": "password"}
    assert env["PGPASSWORD"] == {"name": "harness-postgres", "key": "password"}
    for service in _documents("Service"):  # inside the cluster only: no NodePort, LoadBalancer, externalIPs
        spec = service["spec"]
        assert spec.get("type", "ClusterIP") == "ClusterIP" and "externalIPs" not in spec
        assert _selects({"matchLabels": spec["selector"]}, _pod("dashboard"))


def test_kubernetes_network_policy_lets_only_the_study_pods_reach_the_services() -> None:
    (policy,) = _documents("NetworkPolicy")
    spec = policy["spec"]
    for component in ("postgres", "mlflow", "dashboard"):  # the policy covers the three servers
        assert _selects(spec["podSelector"], _pod(component)), component
    (dashboard,) = _documents("Deployment")
    assert _selects(spec["podSelector"], dashboard["spec"]["template"]["metadata"]["labels"])
    assert "Ingress" in spec["policyTypes"] and spec["ingress"]
    study_pods = [template["metadata"]["labels"] for template in _pod_templates()]
    assert len(study_pods) == 3
    for rule in spec["ingress"]:
        sources = rule.get("from")
        assert sources, "an ingress rule without `from` admits every pod and address"
        for source in sources:
            assert set(source) == {"podSelector"}, source  # no ipBlock, no other namespaces
            assert source["podSelector"], "an empty podSelector admits every pod of the namespace"
            assert all(_selects(source["podSelector"], labels) for labels in study_pods)
            assert not _selects(source["podSelector"], {"app": "something-else"})
        assert {port["port"] for port in rule["ports"]} == {5432, 5000, 8080}


# --- Slurm: the PostgreSQL its workers reach (deploy/postgres/secure.sh), and its clients ---------------


def _secure(folder: Path, *clients: str) -> tuple[list[list[str]], dict[str, str], str]:
    """Run secure.sh on a stand-in data directory; pg_hba.conf's rules, the settings it wrote, and
    postgresql.conf afterwards."""
    data = folder / "data"
    data.mkdir(exist_ok=True)
    if not (data / "postgresql.conf").exists():
        (data / "postgresql.conf").write_text("max_connections = 100\n")
        (data / "pg_hba.conf").write_text("host all all 127.0.0.1/32 trust\n")
        (folder / "server.crt").write_text("cert")
        (folder / "server.key").write_text("key")
    command = [
        "bash",
        str(SECURE),
        str(data),
        str(folder / "server.crt"),
        str(folder / "server.key"),
        *clients,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    rules = [line.split() for line in (data / "pg_hba.conf").read_text().splitlines()]
    settings = dict(
        re.fullmatch(r"(\w+) = '?([^']*)'?", line).groups()  # type: ignore[union-attr]
        for line in (data / "harness-security.conf").read_text().splitlines()
        if line and not line.startswith("#")
    )
    rules = [rule for rule in rules if rule and not rule[0].startswith("#")]
    return rules, settings, (data / "postgresql.conf").read_text()


def test_the_servers_settings_need_tls_and_scram_for_every_connection(tmp_path: Path) -> None:
    rules, settings, conf = _secure(tmp_path)
    assert {rule[0] for rule in rules} == {"local", "hostssl", "hostnossl"}  # no plain `host` line
    for rule in rules:
        if rule[0] == "hostnossl":
            assert rule[-1] == "reject", rule
        else:
            assert rule[-1] == "scram-sha-256", rule
    assert [rule[3] for rule in rules if rule[0] == "hostssl"] == ["0.0.0.0/0", "::/0"]
    assert settings["ssl"] == "on" and settings["password_encryption"] == "scram-sha-256"
    assert settings["ssl_cert_file"] == str(tmp_path / "server.crt")
    assert settings["ssl_key_file"] == str(tmp_path / "server.key")
    assert settings["ssl_min_protocol_version"] in ("TLSv1.2", "TLSv1.3")
    assert conf.splitlines()[-1] == "include = 'harness-security.conf'"
    rules, _, conf = _secure(tmp_path, "10.0.0.0/8")  # again, for the cluster's network only
    assert [rule[3] for rule in rules if rule[0] == "hostssl"] == ["10.0.0.0/8"]
    assert conf.count("include = 'harness-security.conf'") == 1
    assert "trust" in (tmp_path / "data/pg_hba.conf.before-harness").read_text()  # the original, kept once
    for text in ((tmp_path / "data/pg_hba.conf").read_text(),):
        assert not re.search(r"\b(trust|md5|password|ident|peer)\b", text.split("\n", 1)[1])


def _sbatch(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    stand_in = tmp_path / "bin" / "harness"
    stand_in.parent.mkdir(exist_ok=True)
    stand_in.write_text('#!/bin/sh\necho "sslmode: $PGSSLMODE"\n')
    stand_in.chmod(0o755)
    base = {"PATH": f"{stand_in.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "SLURM_ARRAY_TASK_ID": "1",
            "MLFLOW_TRACKING_URI": "http://mlflow:5000"}  # fmt: skip
    script = ["bash", str(SBATCH)]
    return subprocess.run(script, env={**base, **env}, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    ("storage", "pgsslmode", "outcome"),
    [
        ("postgresql+psycopg2://harness@db:5432/optuna", None, "verify-full"),  # the default
        ("postgresql+psycopg2://harness@db:5432/optuna", "verify-ca", "verify-ca"),
        # the URL's mode is the one libpq uses (over PGSSLMODE): TLS, so accepted
        ("postgresql+psycopg2://harness@db:5432/optuna?sslmode=require", None, "verify-full"),
        ("postgresql+psycopg2://harness@db:5432/optuna", "disable", None),
        ("postgresql+psycopg2://harness@db:5432/optuna", "prefer", None),
        ("postgresql+psycopg2://harness@db:5432/optuna?sslmode=disable", None, None),
        ("postgresql+psycopg2://harness@db:5432/optuna?connect_timeout=5&sslmode=allow", "verify-full", None),
        ("postgresql+psycopg2://harness@db:5432/optuna?sslmode=prefer", None, None),
    ],
)
def test_the_slurm_clients_connect_only_with_tls(
    storage: str, pgsslmode: str | None, outcome: str | None, tmp_path: Path
) -> None:
    """harness.sbatch hands its workers PGSSLMODE=verify-full unless told a TLS mode, and refuses a mode
    that could send the password in clear (exit 2, one line naming what to set)."""
    env = {"HARNESS_STORAGE": storage, **({"PGSSLMODE": pgsslmode} if pgsslmode else {})}
    done = _sbatch(tmp_path, **env)
    if outcome is None:
        assert done.returncode == 2 and done.stdout == ""
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("error: sslmode=") and "use sslmode=verify-full" in line
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"sslmode: {outcome}"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _certificates(folder: Path) -> None:
    """A throw-away CA (ca.crt), a server certificate it signed for 127.0.0.1 (server.crt, server.key), and
    a second CA that signed nothing here (other-ca.crt)."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for name in ("ca", "other-ca"):
        _openssl("req", "-x509", *ec, "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "1",
                 "-subj", f"/CN=harness test {name}", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=folder)  # fmt: skip
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=folder)
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "1", "-extfile", "san.ext", cwd=folder)  # fmt: skip


@pytest.mark.slow
@needs_postgres
@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command to make a test CA")
def test_a_server_with_the_settings_refuses_plain_tcp_and_missing_passwords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PostgreSQL 15 with secure.sh's settings and a certificate for 127.0.0.1: plain TCP is refused even
    with the password, TLS without it too; verify-full with the CA and the password connects (over TLS),
    against another CA it does not; the harness opens its storage on the URL form Kubernetes uses."""
    import psycopg2

    from harness.study.optuna_study import open_storage

    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.delenv("PGSSLMODE", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    password = "tls-test-password-92ab"
    server = Postgres("harness", password=password).start()
    try:
        server.execute("CREATE DATABASE optuna")
        server.stop_server()
        _certificates(server.root)
        key = server.root / "server.key"
        key.chmod(0o600)
        if server.as_postgres:
            for name in ("server.key", "server.crt"):
                shutil.chown(server.root / name, "postgres")
        server._run("bash", str(SECURE), str(server.root / "data"), str(server.root / "server.crt"), str(key),
                    "127.0.0.1/32")  # fmt: skip
        server.start_server()
        base = {"host": "127.0.0.1", "port": server.port, "user": "harness", "dbname": "optuna",
                "connect_timeout": 10}  # fmt: skip
        ca, other = str(server.root / "ca.crt"), str(server.root / "other-ca.crt")
        with pytest.raises(psycopg2.OperationalError, match="no encryption"):  # hostnossl ... reject
            psycopg2.connect(**base, password=password, sslmode="disable")
        with pytest.raises(psycopg2.OperationalError, match="no password supplied"):
            psycopg2.connect(**base, sslmode="verify-full", sslrootcert=ca)
        with pytest.raises(psycopg2.OperationalError, match="certificate verify failed"):
            psycopg2.connect(**base, password=password, sslmode="verify-full", sslrootcert=other)
        with psycopg2.connect(**base, password=password, sslmode="verify-full", sslrootcert=ca) as connection:
            cursor = connection.cursor()
            cursor.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert cursor.fetchone() == (True,)
            cursor.execute("SHOW ssl")
            assert cursor.fetchone() == ("on",)
        monkeypatch.setenv("PGPASSWORD", password)
        url = f"postgresql+psycopg2://harness@127.0.0.1:{server.port}/optuna?sslmode=verify-full&sslrootcert={ca}"
        assert open_storage(url).get_all_studies() == []
    finally:
        server.stop()
        os.environ.pop("PGPASSWORD", None)
