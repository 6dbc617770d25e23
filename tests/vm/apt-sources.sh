#!/bin/sh
# Print a one-line-format apt sources list for Debian release CODENAME
# (bookworm, bullseye...), main only, built from this machine's own apt
# sources: the same mirrors (and keyrings), with the machine's codename
# replaced by CODENAME. No mirror is written into the project: whatever the
# machine uses (a proxy, a snapshot, a local mirror) is what the VM kernels
# come from.
#   tests/vm/apt-sources.sh CODENAME > FILE
# Exit 1 with one line on stderr when the machine has no Debian source.
set -eu
want=${1:?usage: apt-sources.sh CODENAME}
# shellcheck disable=SC1091
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$host" ] || { echo "apt-sources: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }

# Both formats, reduced to "URI SUITE SIGNED-BY" lines: deb822 stanzas
# (*.sources) and one-line entries (sources.list, *.list).
entries() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk 'function flush() {
			if (types ~ /(^| )deb( |$)/ && enabled != "no")
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
					print u[i], s[j], (key ~ /^\// ? key : "-")
			types = ""; enabled = ""; key = ""; nu = 0; ns = 0 }
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { next }	# a continuation line (an inline key): not a field
		{ k = tolower($1); sub(/:$/, "", k); $1 = ""; sub(/^ /, "")
		  if (k == "types") types = $0
		  else if (k == "enabled") enabled = tolower($0)
		  else if (k == "signed-by") key = $0
		  else if (k == "uris") nu = split($0, u, " ")
		  else if (k == "suites") ns = split($0, s, " ") }
		END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 != "deb" { next }
		{ key = "-"; i = 2
		  if ($2 ~ /^\[/) {	# options: [signed-by=... arch=...]
			for (; i <= NF; i++) {
				if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
				if ($i ~ /\]$/) break
			}
			i++
		  }
		  print $i, $(i + 1), key }' "$f"
	done
}

# Keep the host's own suites (bookworm, bookworm-updates, bookworm-security...)
# and rename them; a proposed-updates or backports suite is left out.
out=$(entries | awk -v h="$host" -v w="$want" '
	{ suite = $2; rest = substr(suite, length(h) + 1) }
	index(suite, h) == 1 && (rest == "" || rest == "-updates" || rest == "-security" || rest == "/updates") {
		opt = $3 == "-" ? "" : "[signed-by=" $3 "] "
		line = "deb " opt $1 " " w rest " main"
		if (!(line in seen)) { seen[line] = 1; print line } }')
[ -n "$out" ] || { echo "apt-sources: no Debian '$host' source in /etc/apt to take a mirror from" >&2; exit 1; }
echo "$out"
