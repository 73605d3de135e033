# Where TCP's acknowledgements are handled, from call stacks: reads the
# output of `perf script -F time,ip,sym` (a time line, then one frame a
# line, leaf first, a blank line after each sample) and counts the samples
# inside a read (tcp_recvmsg_locked) with a transmit below it
# (__tcp_transmit_skb: an acknowledgement sent from inside the read), and
# those inside a send (tcp_sendmsg) processing the socket's backlog
# (__release_sock: what came in while the send held the socket). Prints
# "read N TX% send N BACKLOG%" on one line for all samples, or with
# -v mark=T (seconds, the samples' clock) two such lines headed "before"
# and "after", for the second on either side of T.
# usage: perf script ... | awk -f bench/perf_acks.awk [-v mark=T]
function sample_done() {
	if (!have)
		return
	if (mark != "") {
		if (t < mark - 1 || t >= mark + 1)
			return
		k = t < mark ? 1 : 2
	} else {
		k = 1
	}
	if (rd) { reads[k]++; if (tx) txs[k]++ }
	if (sd) { sends[k]++; if (bl) bls[k]++ }
}
function line(k) {
	return sprintf("read %d %.0f%% send %d %.0f%%", reads[k], reads[k] ? 100 * txs[k] / reads[k] : 0,
		       sends[k], sends[k] ? 100 * bls[k] / sends[k] : 0)
}
BEGIN { if (mark != "") mark += 0 }
/^[0-9]/ { sample_done(); have = 1; t = substr($1, 1, length($1) - 1) + 0; rd = tx = sd = bl = 0; next }
$2 == "tcp_recvmsg_locked" { rd = 1 }
$2 == "__tcp_transmit_skb" && !rd { tx = 1 }
$2 == "tcp_sendmsg" { sd = 1 }
$2 == "__release_sock" && !sd { bl = 1 }
END {
	sample_done()
	if (mark == "")
		print line(1)
	else
		printf "before %s\nafter %s\n", line(1), line(2)
}
