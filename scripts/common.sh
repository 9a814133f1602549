# Shell functions the scripts share. Sourced (by setup.sh, test-isa.sh, test-arm64.sh), never run.

# Runs a command holding $KVBENCH_CPU_LOCK when it is set, so that builds and timings of
# several people on one machine do not share its cores.
kvbench_locked() {
  if [[ -n "${KVBENCH_CPU_LOCK:-}" ]]; then
    flock "$KVBENCH_CPU_LOCK" "$@"
  else
    "$@"
  fi
}

# kvbench_install_packages [--arch ARCH] PACKAGE...: installs those of the Debian packages not
# installed yet, as root or with sudo; --arch first adds a foreign dpkg architecture (arm64) for
# packages named PACKAGE:ARCH. Without either, prints the command to run as root and exits 1.
kvbench_install_packages() {
  local foreign_arch=""
  if [[ "${1:-}" == --arch ]]; then
    foreign_arch="$2"
    shift 2
  fi
  local missing=() package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  ((${#missing[@]} > 0)) || return 0

  local sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo_cmd=(sudo)
    else
      local add_arch=""
      [[ -z "$foreign_arch" ]] || add_arch="sudo dpkg --add-architecture $foreign_arch && "
      echo "kvbench: missing Debian packages; install them as root, then run this again:" >&2
      echo "  ${add_arch}sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "kvbench: installing ${missing[*]}" >&2
  [[ -z "$foreign_arch" ]] || "${sudo_cmd[@]}" dpkg --add-architecture "$foreign_arch"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
