# tools/bench/report.awk - the raw results of tools/bench.sh as Markdown tables.
#
#   awk -F '\t' -f tools/bench/report.awk RAW
#
# RAW holds the S/V/T/N lines described in tools/bench/lib.sh. One table per
# section, in the order the sections were declared; rows in the order they
# were first measured. A cell is "median (min–max)" over its values, or the
# one value, or its text; the ratio columns divide the first column's median
# by each other column's (shown only when both are positive numbers).

function fmt(x,    a) {
	a = x < 0 ? -x : x
	if (a == int(a) && a < 1e7) return sprintf("%d", x)
	if (a >= 100) return sprintf("%.0f", x)
	if (a >= 10) return sprintf("%.1f", x)
	if (a >= 1) return sprintf("%.2f", x)
	return sprintf("%.3g", x)
}

# Sorts list[1..n] (numbers) in place.
function sort_numbers(list, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = list[i]
		for (j = i - 1; j >= 1 && list[j] > t; j--)
			list[j + 1] = list[j]
		list[j + 1] = t
	}
}

function median_of(key,    n, i, list) {
	n = count[key]
	if (!n) return ""
	for (i = 1; i <= n; i++) list[i] = value[key, i]
	sort_numbers(list, n)
	cell_min = list[1]
	cell_max = list[n]
	return n % 2 ? list[(n + 1) / 2] : (list[n / 2] + list[n / 2 + 1]) / 2
}

function cell(key,    m) {
	if (count[key]) {
		m = median_of(key)
		if (count[key] == 1) return fmt(m)
		return fmt(m) " (" fmt(cell_min) "–" fmt(cell_max) ")"
	}
	if (key in txt) return txt[key]
	return "—"
}

$1 == "S" {
	sec = $2
	order[++nsec] = sec
	title[sec] = $3
	ncol[sec] = NF - 3
	for (i = 4; i <= NF; i++) {
		# key=Display name; the name may hold '=' too ("bpfrec --alloc=1")
		col[sec, i - 3] = substr($i, 1, index($i, "=") - 1)
		colname[sec, i - 3] = substr($i, index($i, "=") + 1)
	}
	next
}
$1 == "V" || $1 == "T" {
	key = $2 SUBSEP $3 SUBSEP $4
	if (!(($2, $3) in hasrow)) {
		hasrow[$2, $3] = 1
		row[$2, ++nrow[$2]] = $3
	}
	if ($1 == "V") value[key, ++count[key]] = $5 + 0
	else txt[key] = $5
	next
}
$1 == "N" { notes[$2, ++nnote[$2]] = $3; next }

END {
	for (s = 1; s <= nsec; s++) {
		sec = order[s]
		printf "### %s. %s\n\n", sec, title[sec]
		line = "| figure"
		sep = "| ---"
		for (c = 1; c <= ncol[sec]; c++) {
			line = line " | " colname[sec, c]
			sep = sep " | ---:"
		}
		for (c = 2; c <= ncol[sec]; c++) {
			line = line " | " col[sec, 1] " / " col[sec, c]
			sep = sep " | ---:"
		}
		print line " |"
		print sep " |"
		for (r = 1; r <= nrow[sec]; r++) {
			name = row[sec, r]
			line = "| " name
			for (c = 1; c <= ncol[sec]; c++)
				line = line " | " cell(sec SUBSEP name SUBSEP col[sec, c])
			ours = median_of(sec SUBSEP name SUBSEP col[sec, 1])
			for (c = 2; c <= ncol[sec]; c++) {
				ref = median_of(sec SUBSEP name SUBSEP col[sec, c])
				if (ours != "" && ref != "" && ours > 0 && ref > 0)
					line = line " | " sprintf("%.2f", ours / ref)
				else
					line = line " | "
			}
			print line " |"
		}
		print ""
		for (n = 1; n <= nnote[sec]; n++)
			print "- " notes[sec, n]
		print ""
	}
}
