#!/bin/bash
# The settings of a PostgreSQL that workers on other machines reach (Slurm's deploy/slurm/harness.sbatch,
# Kubernetes' deploy/kubernetes/*.yaml): TLS on, and every connection asks for its password as
# scram-sha-256; over TCP only with TLS (hostssl), plain TCP refused, nothing trusted. Run it as the server's
# user on its data directory, then restart the server:
#
#   deploy/postgres/secure.sh PGDATA SERVER_CRT SERVER_KEY [CLIENT_CIDR ...]   (default: any address)
#   e.g. runuser -u postgres -- deploy/postgres/secure.sh /var/lib/postgresql/15/main \
#          /etc/harness/pg/server.crt /etc/harness/pg/server.key 10.0.0.0/8
#
# It replaces PGDATA/pg_hba.conf (the old one kept once as pg_hba.conf.before-harness), writes
# PGDATA/harness-security.conf and includes it from PGDATA/postgresql.conf (a later setting there would
# override it: check `SHOW ssl` after the restart). The certificate must name the host the clients' URLs
# use (a DNS or IP subjectAltName: they connect with sslmode=verify-full and check it against their CA);
# the key must be the server user's, mode 0600. Passwords stored before as md5 no longer log in: set them
# again (psql's \password) once password_encryption is scram-sha-256.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 PGDATA SERVER_CRT SERVER_KEY [CLIENT_CIDR ...]" >&2
  exit 2
fi
DATA=$1 CERT=$2 KEY=$3
shift 3
CLIENTS=("$@")
[ ${#CLIENTS[@]} -gt 0 ] || CLIENTS=(0.0.0.0/0 ::/0)
for file in "$DATA/postgresql.conf" "$CERT" "$KEY"; do
  [ -f "$file" ] || { echo "error: $file: no such file" >&2; exit 2; }
done

[ -e "$DATA/pg_hba.conf.before-harness" ] || cp -p "$DATA/pg_hba.conf" "$DATA/pg_hba.conf.before-harness"
{
  echo "# written by deploy/postgres/secure.sh: scram-sha-256 everywhere, TCP only with TLS"
  echo "# TYPE    DATABASE  USER  ADDRESS         METHOD"
  echo "local     all       all                   scram-sha-256"
  for cidr in "${CLIENTS[@]}"; do
    printf 'hostssl   all       all   %-15s scram-sha-256\n' "$cidr"
  done
  echo "hostnossl all       all   all             reject"
} > "$DATA/pg_hba.conf"

cat > "$DATA/harness-security.conf" <<EOF
# written by deploy/postgres/secure.sh (included from postgresql.conf)
listen_addresses = '*'
ssl = on
ssl_cert_file = '$CERT'
ssl_key_file = '$KEY'
ssl_min_protocol_version = 'TLSv1.2'
password_encryption = 'scram-sha-256'
EOF
# `include`, not include_if_exists: without the file the server does not start (rather than start without TLS)
grep -qx "include = 'harness-security.conf'" "$DATA/postgresql.conf" ||
  echo "include = 'harness-security.conf'" >> "$DATA/postgresql.conf"
echo "wrote $DATA/pg_hba.conf and $DATA/harness-security.conf; restart the server (pg_ctl restart)"
