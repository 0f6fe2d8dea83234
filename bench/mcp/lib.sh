# Helpers shared by run.sh, instr.sh and pgo.sh, which source this file.
# Every process they start is ended by its PID, and every wait is bounded.

# free_port prints a TCP port on 127.0.0.1 that was free a moment ago.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# wait_port port pid [seconds]: waits until port accepts connections, for
# up to seconds (10) and only while pid lives.
wait_port() {
	for _ in $(seq 1 $((${3:-10} * 20))); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# stop_pid pid [signal] [seconds]: sends signal (TERM) to one process this
# script started and waits for it for up to seconds (3), then SIGKILLs it.
stop_pid() {
	local p=$1
	kill "-${2:-TERM}" "$p" 2>/dev/null || return 0
	for _ in $(seq 1 $((${3:-3} * 10))); do
		kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}

# stop_started [seconds]: stops every PID in the calling script's pids
# (stop_pid, with SIGTERM and that grace, 3 s by default) and removes its
# tmp directory; the scripts call it from their EXIT trap.
stop_started() {
	for p in "${pids[@]}"; do stop_pid "$p" TERM "${1:-3}"; done
	rm -rf "$tmp"
}

# seconds d: a duration such as 10s, 1m or 500ms in whole seconds, rounded up.
seconds() {
	python3 -c 'import re,sys,math; v=sys.argv[1]; m=re.fullmatch(r"([0-9.]+)(ms|s|m|h)",v); u={"ms":.001,"s":1,"m":60,"h":3600}; print(math.ceil(float(m[1])*u[m[2]]))' "$1"
}
