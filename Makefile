# bpfrec - see README.md. `make` builds build/bpfrec, libbpfrec (.a, .so) and
# build/libperfdata.a.
#
#   make            build everything
#   make install    PREFIX=/usr/local DESTDIR= : bpfrec, libbpfrec, headers, bpfrec.pc
#   make uninstall  the same PREFIX/DESTDIR
#   make test       install deps, build, unit tests (plain and ASan+UBSan), integration tests
#   make test-kernels  the integration tests in a VM on each of Debian's KERNELS (tests/vm/)
#   make demo       install deps, build, record the bundled workload, perf report it
#   make bench      benchmarks against perf record / perf report, heaptrack, memleak-bpfcc (see Documentation/)
#   make bench-memory  the recorder's peak RSS and -z cost against perf record's (scenario 10)
#   make bench-agent   bpfrec agent's CPU and memory over 10 minutes with churn (scenario 11)
#
# A second build tree with sanitizers: make BUILD=build/asan SAN=1 unit-bins
# libFuzzer harnesses (clang): make fuzz [FUZZ_TIME=300]; their own tree is build/fuzz.

BUILD    ?= build
SAN      ?=
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
# make test-kernels: series (or exact versions) of Debian's kernels, booted by tests/vm/run.sh.
KERNELS  ?= 6.1 6.12 5.10
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
JOBS     ?= $(shell nproc 2>/dev/null || echo 1)

# The sanitizer and fuzz trees at -O1 (what ASan's authors advise): half the
# compile time of -O2, still fast enough to run every unit test.
ifneq ($(SAN)$(FUZZ),)
CFLAGS   ?= -O1 -g
else
CFLAGS   ?= -O2 -g
endif
# -fPIC: the same objects make libbpfrec.a and libbpfrec.so. Hidden by
# default: the shared library exports only what BPFREC_API marks.
# The warnings of every C source but the BPF programs: beyond -Wall -Wextra,
# a name that hides another, an array sized at run time on the stack, a
# global function no header declares, a declaration without its parameter
# list, a format string that is not a literal.
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wvla -Wmissing-prototypes -Wstrict-prototypes \
	    -Wformat=2
CFLAGS   += -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -I. -I$(BUILD)/gen -I$(BUILD)/include \
	    -fPIC -fvisibility=hidden -MMD -MP
# No libm: loading it faults in ~0.3 MB of its text (its IFUNC relocations)
# in every bpfrec process, the recorder's peak included; the tests use it.
LDLIBS   := -lbpf -lelf -ldw -lz -lzstd -ltraceevent -lpthread
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif
# The fuzz tree: everything compiled by clang with coverage for libFuzzer.
ifeq ($(FUZZ),1)
CC       := $(CLANG)
CFLAGS   += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=fuzzer,address,undefined
endif

# The generic code every module shares (tools/lib/: the hash table, the
# version, ...), knowing nothing of perf.data, BPF or ELF.
TOOLS_LIB_SRCS := $(wildcard tools/lib/*.c)
PERFDATA_SRCS  := $(wildcard perfdata/*.c)
SYMBOLIZE_SRCS := $(wildcard symbolize/*.c)
# The command line (tools/cli/): a user of the public API only, not part of
# the library; main() is tools/cli/bpfrec.c.
CLI_MAIN       := tools/cli/bpfrec.c
CLI_SRCS       := $(filter-out $(CLI_MAIN),$(wildcard tools/cli/*.c))
# libbpfrec-alloc.so (recorder/preload/): a library of its own, preloaded
# into a command the recorder launches; it defines malloc, so libbpfrec
# never holds any of it.
PRELOAD_SRCS   := $(wildcard recorder/preload/*.c)
# The sources that embed a BPF object (a skeleton: 130-190 KB of ELF each,
# read once, when it is opened; a recording opens one or two), the
# recorder's own first. They come last in every link, so that their objects
# follow all the other constants instead of sitting between them: the
# kernel maps a file's pages 64 KB (or a page-cache folio) at a time around
# each one read, and the constants in between dragged ~340 KB of unread BPF
# objects into the resident memory of every bpfrec process, the recorder's
# peak (the BPF load) included.
SKEL_SRCS      := recorder/sampler.c \
		  $(filter-out recorder/sampler.c,$(shell grep -l '\.skel\.h"' recorder/*.c))
# libbpfrec: everything else.
LIB_SRCS       := $(filter-out $(SKEL_SRCS),$(TOOLS_LIB_SRCS) $(PERFDATA_SRCS) $(SYMBOLIZE_SRCS) \
		  $(wildcard recorder/*.c) $(filter-out $(CLI_MAIN) $(CLI_SRCS) $(TOOLS_LIB_SRCS), \
		  $(wildcard tools/*.c) $(wildcard tools/*/*.c))) $(SKEL_SRCS)
APP_SRCS       := $(LIB_SRCS) $(CLI_SRCS)
# The public headers: each in its module as bpfrec_*.h, installed (and, for
# in-tree users, copied to $(BUILD)/include) under include/bpfrec/.
PUB_HDRS       := $(addprefix $(BUILD)/include/bpfrec/,common.h perfdata.h record.h pprof.h bpfrec.h sched.h agent.h \
		  flamegraph.h)
LIB_MAJOR      := 0
LIB_MINOR      := 1
LIB_SONAME     := libbpfrec.so.$(LIB_MAJOR)
LIB_SO         := $(LIB_SONAME).$(LIB_MINOR)
BPF_SRCS       := $(wildcard bpf/*.bpf.c)
SKELS          := $(patsubst bpf/%.bpf.c,$(BUILD)/gen/%.skel.h,$(BPF_SRCS))
UNIT_SRCS      := $(wildcard tests/unit/test_*.c)
# BPF programs of unit tests alone (a program the verifier rejects), as skeletons.
UNIT_BPF_SRCS  := $(wildcard tests/unit/*.bpf.c)
UNIT_SKELS     := $(patsubst tests/unit/%.bpf.c,$(BUILD)/gen/%.skel.h,$(UNIT_BPF_SRCS))
UNIT_BINS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS   := $(filter-out tests/fixtures/lib%.c,$(wildcard tests/fixtures/*.c))
FIXTURE_LIBS   := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%.so,$(wildcard tests/fixtures/lib*.c))
FIXTURES       := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%,$(FIXTURE_SRCS)) $(FIXTURE_LIBS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

.PHONY: all install uninstall deps deps-test deps-bench unit-bins fixtures fuzz-bins fuzz test unit integration demo bench \
	bench-long bench-memory bench-agent clean test-kernels
.DELETE_ON_ERROR:

all: $(BUILD)/bpfrec $(BUILD)/libbpfrec.a $(BUILD)/$(LIB_SO) $(BUILD)/libperfdata.a \
     $(BUILD)/libbpfrec-alloc.so

deps:
	@sh tools/deps.sh build
deps-test:
	@sh tools/deps.sh test
deps-bench:
	@sh tools/deps.sh bench

# The compiler flags, remembered: objects built with other flags (an older
# tree without -fPIC, say) are rebuilt instead of breaking the link.
FLAGS_STAMP := $(BUILD)/.cflags
$(shell mkdir -p $(BUILD) && echo '$(CC) $(CFLAGS)' | cmp -s - $(FLAGS_STAMP) || \
	echo '$(CC) $(CFLAGS)' > $(FLAGS_STAMP))

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# perfdata with the generic code it builds on, so the archive stands alone.
$(BUILD)/libperfdata.a: $(call obj,$(TOOLS_LIB_SRCS) $(PERFDATA_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libbpfrec.a: $(call obj,$(LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/$(LIB_SO): $(call obj,$(LIB_SRCS))
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS)
	ln -sf $(LIB_SO) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(BUILD)/libbpfrec.so
# The command line's own objects, for the command and for tests of them.
$(BUILD)/libbpfrec-cli.a: $(call obj,$(CLI_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/include/bpfrec/common.h: tools/lib/bpfrec_common.h
$(BUILD)/include/bpfrec/perfdata.h: perfdata/bpfrec_perfdata.h
$(BUILD)/include/bpfrec/record.h: recorder/bpfrec_record.h
$(BUILD)/include/bpfrec/pprof.h: tools/pprof/bpfrec_pprof.h
$(BUILD)/include/bpfrec/flamegraph.h: tools/flamegraph/bpfrec_flamegraph.h
$(BUILD)/include/bpfrec/bpfrec.h: recorder/bpfrec_lib.h
$(BUILD)/include/bpfrec/sched.h: perfdata/bpfrec_sched.h
$(BUILD)/include/bpfrec/agent.h: tools/agent/bpfrec_agent.h
$(PUB_HDRS):
	@mkdir -p $(dir $@)
	cp $< $@

# The flame graph page is an ordinary source file, flame.html, made a C array
# here (od and sed: no tool beyond coreutils) so that bpfrec carries it.
$(BUILD)/gen/flame_template.h: tools/flamegraph/flame.html
	@mkdir -p $(dir $@)
	{ echo '/* generated from $< by the Makefile: edit that file */'; \
	  echo 'static const unsigned char fg_template[] = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'static const size_t fg_template_len = sizeof(fg_template);'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/tools/flamegraph/html.o: $(BUILD)/gen/flame_template.h

# The command and its BPF programs. Objects that include a skeleton need it first.
$(call obj,$(APP_SRCS) $(CLI_MAIN)): | $(SKELS) $(PUB_HDRS)

# The command is linked with the static libraries' objects, in the order
# above (an archive's members would be placed in the order the link pulls
# them in): it runs wherever it is copied.
APP_LIBS := $(BUILD)/libbpfrec-cli.a $(BUILD)/libbpfrec.a
$(BUILD)/bpfrec: $(call obj,$(CLI_MAIN) $(CLI_SRCS) $(LIB_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
DOCDIR  ?= $(PREFIX)/share/doc/bpfrec

# record --alloc's fast path for a launched command (recorder/preload/):
# preloaded into it, so its own small object with no dependency but libc,
# built with its own flags in every tree (no sanitizer inside another
# program's malloc). Frame pointers and no sibling calls: the probed
# marker's callers are on the stack. The recorder looks for it next to
# itself, then in $(LIBDIR)/bpfrec.
$(BUILD)/libbpfrec-alloc.so: $(PRELOAD_SRCS) $(wildcard recorder/preload/*.h) bpf/alloc.h $(FLAGS_STAMP)
	$(CC) -O2 -g -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -I. -fPIC -fvisibility=hidden \
	      -fno-omit-frame-pointer -fno-optimize-sibling-calls -ftls-model=initial-exec \
	      -shared -Wl,--build-id=sha1 -o $@ $(PRELOAD_SRCS)
$(BUILD)/obj/recorder/alloc.o: CFLAGS += -DBPFREC_ALLOC_LIBDIR='"$(LIBDIR)/bpfrec"'

# The reference pages (Documentation/*.md) go in as they are: Markdown reads
# fine in a terminal, and no man-page converter is a build dependency.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/bpfrec \
		$(DESTDIR)$(DOCDIR)
	install -m 755 $(BUILD)/bpfrec $(DESTDIR)$(BINDIR)/bpfrec
	install -m 644 $(BUILD)/libbpfrec.a $(DESTDIR)$(LIBDIR)/libbpfrec.a
	install -m 755 $(BUILD)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SO)
	install -d $(DESTDIR)$(LIBDIR)/bpfrec
	install -m 755 $(BUILD)/libbpfrec-alloc.so $(DESTDIR)$(LIBDIR)/bpfrec/libbpfrec-alloc.so
	ln -sf $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libbpfrec.so
	install -m 644 $(PUB_HDRS) $(DESTDIR)$(INCDIR)/bpfrec/
	@# pkg-config, written for this PREFIX: the dependencies are private
	@# (only a static link needs them).
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	  'Name: bpfrec' 'Description: BPF CPU profiler: record perf.data, convert to pprof' \
	  'Version: $(LIB_MAJOR).$(LIB_MINOR).0' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lbpfrec' \
	  'Requires.private: libbpf libelf libdw zlib libzstd libtraceevent' \
	  'Libs.private: -lpthread' > $(DESTDIR)$(LIBDIR)/pkgconfig/bpfrec.pc
	install -m 644 Documentation/*.md $(DESTDIR)$(DOCDIR)/
	install -m 644 $(wildcard Documentation/examples/*.c) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/bpfrec $(DESTDIR)$(LIBDIR)/libbpfrec.a \
	      $(DESTDIR)$(LIBDIR)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
	      $(DESTDIR)$(LIBDIR)/libbpfrec.so $(DESTDIR)$(LIBDIR)/pkgconfig/bpfrec.pc \
	      $(addprefix $(DESTDIR)$(INCDIR)/bpfrec/,$(notdir $(PUB_HDRS))) \
	      $(DESTDIR)$(LIBDIR)/bpfrec/libbpfrec-alloc.so
	-rmdir $(DESTDIR)$(LIBDIR)/bpfrec
	rm -rf $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(INCDIR)/bpfrec

$(BUILD)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
$(BUILD)/gen/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/gen/vmlinux.h
	$(CLANG) -target bpf -D__TARGET_ARCH_x86 -g -O2 -Wall -Werror -I$(BUILD)/gen -Ibpf -c $< -o $@
$(BUILD)/gen/%.bpf.o: tests/unit/%.bpf.c $(BUILD)/gen/vmlinux.h
	$(CLANG) -target bpf -D__TARGET_ARCH_x86 -g -O2 -Wall -Werror -I$(BUILD)/gen -c $< -o $@
$(BUILD)/gen/%.skel.h: $(BUILD)/gen/%.bpf.o
	$(BPFTOOL) gen object $(BUILD)/gen/$*.lnk.o $<
	$(BPFTOOL) gen skeleton $(BUILD)/gen/$*.lnk.o name $* > $@

# Unit tests (Criterion), one binary per module. A module outside the
# libraries is linked into its own test only, as an object prerequisite.
$(BUILD)/tests/%: tests/unit/%.c $(APP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(filter %.o,$^) $(APP_LIBS) -lcriterion $(LDLIBS) -lm
$(BUILD)/tests/test_alloc_inproc: $(call obj,recorder/preload/alloc_inproc.c)
$(UNIT_BINS): | $(SKELS) $(UNIT_SKELS) $(PUB_HDRS)
unit-bins: $(UNIT_BINS)

# Fixtures: exact stacks need frame pointers, no inlining and no leaf-frame omission.
FIXTURE_CFLAGS := -O0 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		  -fno-optimize-sibling-calls -fno-inline -Wl,--build-id=sha1
$(BUILD)/fixtures/lib%.so: tests/fixtures/lib%.c
	@mkdir -p $(dir $@)
	$(CC) $(FIXTURE_CFLAGS) -shared -fPIC -o $@ $<
# unw_*: built as distributions build (-O2, no frame pointers), for DWARF unwinding.
UNW_FIXTURE_CFLAGS := -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables \
		      -Wl,--build-id=sha1
$(BUILD)/fixtures/unw_%: tests/fixtures/unw_%.c
	@mkdir -p $(dir $@)
	$(CC) $(UNW_FIXTURE_CFLAGS) -o $@ $< -lpthread -ldl -lm
$(BUILD)/fixtures/%: tests/fixtures/%.c
	@mkdir -p $(dir $@)
	$(CC) $(FIXTURE_CFLAGS) -o $@ $< -lpthread -ldl -lm
# cfi_* fixtures: built as distributions build, without frame pointers, so
# only their CFI (.eh_frame) can walk them; still no inlining or tail calls.
$(BUILD)/fixtures/cfi_%: tests/fixtures/cfi_%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wl,--build-id=sha1 -o $@ $<
# Fixtures without frame pointers (nofp_*), as distributions build code: only
# a CFI unwinder finds their callers. Sibling calls off so no frame vanishes
# into a jump; no identical-code folding so each function keeps its name.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -fno-ipa-icf \
	       -Wl,--build-id=sha1
$(BUILD)/fixtures/nofp_%: tests/fixtures/nofp_%.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -o $@ $<
# libcfi_gold.so: a library as Debian links libLLVM-14, with gold, which puts
# the dynamic relocations and .rodata into the executable segment
# (tests/fixtures/libcfi_gold.c); nofp_gold calls into it from the directory
# it is in.
$(BUILD)/fixtures/libcfi_gold.so: tests/fixtures/libcfi_gold.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -shared -fPIC -fuse-ld=gold -o $@ $<
$(BUILD)/fixtures/nofp_gold: tests/fixtures/nofp_gold.c $(BUILD)/fixtures/libcfi_gold.so
	$(CC) $(NOFP_CFLAGS) -o $@ $< -L$(BUILD)/fixtures -lcfi_gold -Wl,-rpath,'$$ORIGIN'
# alloc_* fixtures (record --alloc): built as distributions build, like nofp_*.
$(BUILD)/fixtures/alloc_%: tests/fixtures/alloc_%.c
	@mkdir -p $(dir $@)
	$(CC) $(NOFP_CFLAGS) -o $@ $< -lpthread -ldl
# Test-only programs (synthetic recordings and the like), linked with our libraries.
TEST_TOOLS     := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(wildcard tests/tools/*.c))
$(BUILD)/tests/tools/%: tests/tools/%.c $(APP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(APP_LIBS) $(LDLIBS) -lm
$(TEST_TOOLS): | $(SKELS) $(PUB_HDRS)
fixtures: $(FIXTURES) $(TEST_TOOLS)

# libFuzzer harnesses, one per parser (tests/fuzz/README.md). Built only in a
# FUZZ=1 tree: `make fuzz-bins` from the top builds that tree.
FUZZ_SRCS      := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS      := $(patsubst tests/fuzz/%.c,$(BUILD)/%,$(FUZZ_SRCS))
FUZZ_BUILD     ?= build/fuzz
FUZZ_TIME      ?= 300
ifeq ($(FUZZ),1)
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(APP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(APP_LIBS) $(LDLIBS)
$(FUZZ_BINS): | $(SKELS) $(PUB_HDRS)
fuzz-bins: $(FUZZ_BINS)
else
fuzz-bins:
	$(MAKE) BUILD=$(FUZZ_BUILD) FUZZ=1 fuzz-bins
endif

# Each harness for FUZZ_TIME seconds from its seed corpus; new inputs go to a
# scratch dir, crashes to $(FUZZ_BUILD)/crashes (add them to the corpus once fixed).
fuzz: deps-test fuzz-bins
	@sh tests/fuzz/run.sh fuzz $(FUZZ_BUILD) $(FUZZ_TIME)

unit: unit-bins
	@sh tests/run.sh unit $(BUILD)

integration: all fixtures
	@sh tests/run.sh integration $(BUILD)

# The three trees build with every CPU: serial, the build alone took over
# ten minutes of CI's time.
test: deps-test
	$(MAKE) -j$(JOBS) all unit-bins fixtures
	$(MAKE) -j$(JOBS) BUILD=$(BUILD)/asan SAN=1 unit-bins
	$(MAKE) -j$(JOBS) BUILD=$(BUILD)/fuzz FUZZ=1 fuzz-bins
	@sh tests/run.sh all $(BUILD)

# The integration suite on other kernels than the machine's: built here, run
# inside a VM booted on each of KERNELS (under TCG about 20 min each).
# The fuzz harnesses too: tests 70 and 71 replay and fuzz with them.
test-kernels: deps-test
	$(MAKE) -j$(JOBS) all fixtures
	$(MAKE) -j$(JOBS) BUILD=$(BUILD)/fuzz FUZZ=1 fuzz-bins
	@sh tests/vm/kernels.sh $(BUILD) $(KERNELS)

demo: deps-test
	$(MAKE) all fixtures
	@sh tools/demo.sh $(BUILD)

bench: deps-bench
	$(MAKE) all fixtures
	@sh tools/bench.sh $(BUILD)

# Scenario 10 only: the recorder's peak RSS and -z cost against perf record's.
bench-memory: deps-test
	$(MAKE) all fixtures
	@BENCH_ONLY=10 sh tools/bench.sh $(BUILD)

# Scenarios 6 and 11: a 10-minute system-wide recording, its RSS every 10 s;
# bpfrec agent for 10 minutes at 19 and at 99 Hz.
bench-long: deps-test
	$(MAKE) all fixtures
	@BENCH_ONLY="6 11" BENCH_AGENT_SECS=$${BENCH_AGENT_SECS:-600} sh tools/bench.sh $(BUILD)

# Scenario 11 only: bpfrec agent's CPU and memory, 10 minutes at each rate.
bench-agent: deps-test
	$(MAKE) all fixtures
	@BENCH_ONLY=11 BENCH_AGENT_SECS=$${BENCH_AGENT_SECS:-600} sh tools/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
