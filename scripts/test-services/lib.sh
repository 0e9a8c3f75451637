# Shared helpers for the ensure-*.sh scripts (sourced, not run).
ENV_FILE="${ANALYTICS_TEST_SERVICES_ENV:-/tmp/analytics-test-services.env}"

# Replaces one KEY=value line in the env file; each script owns its own keys.
set_env() {
  local key="$1" value="$2" tmp
  touch "$ENV_FILE"
  tmp="$(mktemp "${ENV_FILE}.XXXXXX")"
  grep -v "^${key}=" "$ENV_FILE" >"$tmp" || true
  echo "${key}=${value}" >>"$tmp"
  mv "$tmp" "$ENV_FILE"
}

get_env() {
  [ -f "$ENV_FILE" ] && grep "^$1=" "$ENV_FILE" | tail -n 1 | cut -d= -f2- || true
}

# apt-get install once per machine; dpkg's lock is waited for (another script may be installing too).
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null
}
