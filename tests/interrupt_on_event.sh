# Sourced by the CLI tests that stop a run at an event of its --progress jsonl stream, never after
# a guessed delay.
# interrupt_on_event EVENT FIFO ERR OUT -- COMMAND...: runs COMMAND with its stdout in OUT and its
# stderr through FIFO, each line appended to ERR; sends SIGINT at the first line naming EVENT,
# keeps the rest of stderr until COMMAND exits, and sets `code` to COMMAND's exit status. Calls
# the caller's `fail` when no such event comes within 120 s.
interrupt_on_event() {
  local event=$1 fifo=$2 err=$3 out=$4
  shift 5
  mkfifo "$fifo"
  "$@" >"$out" 2>"$fifo" &
  local pid=$! sent=0 line
  exec 3<"$fifo"
  while IFS= read -r -t 120 line <&3; do
    printf '%s\n' "$line" >>"$err"
    case $line in *"\"event\":\"$event\""*) kill -INT "$pid"; sent=1; break ;; esac
  done
  [ "$sent" -eq 1 ] || { kill -KILL "$pid" 2>/dev/null; fail "no $event event within 120 s"; }
  timeout 120 cat <&3 >>"$err"
  exec 3<&-
  wait "$pid"
  code=$?
  rm -f "$fifo"
}
