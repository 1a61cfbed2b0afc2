# Sourced by .ci/run (after `npm ci`): makes PostgreSQL available for the store tests
# (docs/store.md, "Testing against PostgreSQL") and exports BATON_TEST_POSTGRES_URL. Idempotent:
# 1. BATON_TEST_POSTGRES_URL set, or something already accepting connections on 127.0.0.1:5432:
#    use it as it is (a running server is never stopped or reconfigured);
# 2. else a Debian cluster on that port exists: start it;
# 3. else install PostgreSQL (apt-get, as root or through sudo) and create and start a cluster;
# then, if the default URL (role postgres, no password) cannot log in to the server this script
# set up, create a role `baton_ci` (LOGIN CREATEDB) with a fresh random password over the local
# socket and export its URL (a later run finds that role and renews its password).
# Works as root on a fresh Debian 12 with Node 20; prints what it did.

baton_ci_postgres() {
  local root port url probe ver cluster line
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  port="${BATON_CI_POSTGRES_PORT:-5432}" # another port only to test this script
  url="${BATON_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:${port}/postgres}"

  # `node -e` resolves `pg` from the repository's node_modules (npm ci ran before).
  probe='const [mode, target] = process.argv.slice(1);
    if (mode === "tcp") {
      const s = require("node:net").connect(Number(target), "127.0.0.1");
      s.setTimeout(2000, () => process.exit(1));
      s.on("connect", () => process.exit(0)).on("error", () => process.exit(1));
    } else {
      const c = new (require("pg").Client)({ connectionString: target, connectionTimeoutMillis: 3000 });
      c.connect().then(() => c.query("SELECT 1")).then(() => process.exit(0), (e) => {
        console.error("services: " + e.message);
        process.exit(1);
      });
    }'
  _pg_tcp() { (cd "$root" && node -e "$probe" tcp "$port"); }
  _pg_login() { (cd "$root" && node -e "$probe" url "$1"); }
  _pg_redact() { printf '%s' "$1" | sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#'; }
  _pg_sudo() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
  # "version cluster" of the Debian cluster on our port, if any.
  _pg_cluster() { command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p { print $1 " " $2; exit }'; }

  # Give the role baton_ci (LOGIN CREATEDB) a fresh password over the local socket and use it.
  # `existing`: only if an earlier run of this script created it (never add a role to a server
  # this script did not set up).
  _pg_own_role() {
    local pw
    command -v runuser >/dev/null || return 1
    if [ "$1" = existing ]; then
      [ "$(_pg_sudo runuser -u postgres -- psql -p "$port" -qAtc "SELECT 1 FROM pg_roles WHERE rolname = 'baton_ci'" 2>/dev/null)" = 1 ] || return 1
      echo "== services: role baton_ci exists (made by an earlier run): giving it a fresh password"
    else
      echo "== services: creating role baton_ci (LOGIN CREATEDB) with a fresh password over the local socket"
    fi
    pw="$(node -e 'process.stdout.write(require("node:crypto").randomBytes(18).toString("base64url"))')"
    _pg_sudo runuser -u postgres -- psql -p "$port" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL || {
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'baton_ci') THEN CREATE ROLE baton_ci LOGIN CREATEDB; END IF;
END \$\$;
ALTER ROLE baton_ci PASSWORD '${pw}';
SQL
      echo "== services: ERROR: cannot set up role baton_ci" >&2
      return 1
    }
    url="postgres://baton_ci:${pw}@127.0.0.1:${port}/postgres"
  }

  if [ -n "${BATON_TEST_POSTGRES_URL:-}" ]; then
    echo "== services: BATON_TEST_POSTGRES_URL is set ($(_pg_redact "$url")): using it as it is"
    _pg_login "$url" || echo "== services: WARNING: cannot log in there; the PostgreSQL tests will fail under CI"
    export BATON_TEST_POSTGRES_URL="$url"
    return 0
  fi

  if _pg_tcp; then
    echo "== services: PostgreSQL already accepts connections on 127.0.0.1:${port}: using it (not restarted or reconfigured)"
    if ! _pg_login "$url" 2>/dev/null && ! _pg_own_role existing; then
      echo "== services: WARNING: cannot log in as $(_pg_redact "$url"); set BATON_TEST_POSTGRES_URL"
    fi
    echo "== services: PostgreSQL tests will use $(_pg_redact "$url")"
    export BATON_TEST_POSTGRES_URL="$url"
    return 0
  fi

  cluster="$(_pg_cluster || true)"
  if [ -z "$cluster" ] && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "== services: no PostgreSQL here: installing it (apt-get install postgresql)"
    _pg_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      _pg_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || {
      echo "== services: ERROR: cannot install PostgreSQL (need root or sudo, and apt-get)" >&2
      return 1
    }
    cluster="$(_pg_cluster || true)"
  fi
  if [ -z "$cluster" ]; then
    ver="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    line="main"
    [ -d "/etc/postgresql/${ver}/main" ] && line="baton_ci"
    echo "== services: creating cluster ${ver}/${line} on port ${port}"
    _pg_sudo pg_createcluster -p "$port" "$ver" "$line" >/dev/null || {
      echo "== services: ERROR: pg_createcluster failed" >&2
      return 1
    }
    cluster="${ver} ${line}"
  fi
  # shellcheck disable=SC2086 # "version cluster" splits into two arguments on purpose
  if ! _pg_sudo pg_ctlcluster $cluster status >/dev/null 2>&1; then
    echo "== services: starting cluster ${cluster/ //} on port ${port}"
    # shellcheck disable=SC2086
    _pg_sudo pg_ctlcluster --skip-systemctl-redirect $cluster start || {
      echo "== services: ERROR: cannot start cluster ${cluster/ //}" >&2
      return 1
    }
  fi
  for _ in $(seq 1 30); do _pg_tcp && break || sleep 1; done

  if ! _pg_login "$url" 2>/dev/null; then
    # The Debian default asks a password over TCP: use a role of our own rather than change
    # pg_hba.conf or the postgres role's password.
    _pg_own_role create || return 1
  fi
  _pg_login "$url" || {
    echo "== services: ERROR: PostgreSQL on 127.0.0.1:${port} does not accept $(_pg_redact "$url")" >&2
    return 1
  }
  echo "== services: PostgreSQL ready at $(_pg_redact "$url")"
  export BATON_TEST_POSTGRES_URL="$url"
}

baton_ci_postgres
unset -f baton_ci_postgres _pg_tcp _pg_login _pg_redact _pg_sudo _pg_cluster _pg_own_role
