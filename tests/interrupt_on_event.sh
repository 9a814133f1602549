# Sourced by the CLI tests that stop a run at a line of its stderr (an event of its --progress
# jsonl stream, a -v line), never after a guessed delay.
# signal_on_line SIGNAL PATTERN FIFO ERR OUT -- COMMAND...: runs COMMAND with its stdout in OUT and
# its stderr through FIFO, each line appended to ERR; sends SIGNAL at the first line matching the
# shell pattern PATTERN, keeps the rest of stderr until COMMAND exits, and sets `code` to
# COMMAND's exit status. Calls the caller's `fail` when no such line comes within 120 s.
signal_on_line() {
  local signal=$1 pattern=$2 fifo=$3 err=$4 out=$5
  shift 6
  mkfifo "$fifo"
  "$@" >"$out" 2>"$fifo" &
  local pid=$! sent=0 line
  exec 3<"$fifo"
  while IFS= read -r -t 120 line <&3; do
    printf '%s\n' "$line" >>"$err"
    # shellcheck disable=SC2254 # the pattern is the caller's
    case $line in $pattern) kill -"$signal" "$pid"; sent=1; break ;; esac
  done
  [ "$sent" -eq 1 ] || { kill -KILL "$pid" 2>/dev/null; fail "no line matching $pattern within 120 s"; }
  timeout 120 cat <&3 >>"$err"
  exec 3<&-
  wait "$pid"
  code=$?
  rm -f "$fifo"
}

# interrupt_on_event EVENT FIFO ERR OUT -- COMMAND...: SIGINT at the first --progress jsonl line
# naming EVENT.
interrupt_on_event() {
  local event=$1
  shift
  signal_on_line INT "*\"event\":\"$event\"*" "$@"
}
