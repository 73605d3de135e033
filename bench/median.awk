# The median of a space-separated list of numbers (the upper middle one of
# an even count), or `none` when the list is empty (an empty string, 0 as
# a number, when the caller leaves it out). The bench scripts put
# this before their own awk program: awk "$(cat "$here/median.awk")"'...'
function med(list, none,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n ? a[int((n + 1) / 2)] : none
}
