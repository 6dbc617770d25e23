# bpfrec - see README.md. `make` builds build/bpfrec and build/libperfdata.a.
#
#   make            build everything
#   make test       install deps, build, unit tests (plain and ASan+UBSan), integration tests
#   make demo       install deps, build, record the bundled workload, perf report it
#   make bench      benchmarks against perf record / perf report (see Documentation/)
#
# A second build tree with sanitizers: make BUILD=build/asan SAN=1 unit-bins
# libFuzzer harnesses (clang): make fuzz [FUZZ_TIME=300]; their own tree is build/fuzz.

BUILD    ?= build
SAN      ?=
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -I$(BUILD)/gen -MMD -MP
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

PERFDATA_SRCS  := $(wildcard perfdata/*.c)
SYMBOLIZE_SRCS := $(wildcard symbolize/*.c)
# Everything the command is made of except main(): tests link it too.
APP_SRCS       := $(filter-out recorder/bpfrec.c,$(wildcard recorder/*.c)) \
		  $(wildcard tools/*.c) $(wildcard tools/*/*.c)
BPF_SRCS       := $(wildcard bpf/*.bpf.c)
SKELS          := $(patsubst bpf/%.bpf.c,$(BUILD)/gen/%.skel.h,$(BPF_SRCS))
UNIT_SRCS      := $(wildcard tests/unit/test_*.c)
UNIT_BINS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS   := $(filter-out tests/fixtures/lib%.c,$(wildcard tests/fixtures/*.c))
FIXTURE_LIBS   := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%.so,$(wildcard tests/fixtures/lib*.c))
FIXTURES       := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%,$(FIXTURE_SRCS)) $(FIXTURE_LIBS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

.PHONY: all deps deps-test unit-bins fixtures fuzz-bins fuzz test unit integration demo bench \
	bench-long clean
.DELETE_ON_ERROR:

all: $(BUILD)/bpfrec $(BUILD)/libperfdata.a

deps:
	@sh tools/deps.sh build
deps-test:
	@sh tools/deps.sh test

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libperfdata.a: $(call obj,$(PERFDATA_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libsymbolize.a: $(call obj,$(SYMBOLIZE_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/libbpfrec.a: $(call obj,$(APP_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The command and its BPF programs. Objects that include a skeleton need it first.
$(call obj,$(APP_SRCS) recorder/bpfrec.c): | $(SKELS)

APP_LIBS := $(BUILD)/libbpfrec.a $(BUILD)/libsymbolize.a $(BUILD)/libperfdata.a
$(BUILD)/bpfrec: $(call obj,recorder/bpfrec.c) $(APP_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
$(BUILD)/gen/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/gen/vmlinux.h
	$(CLANG) -target bpf -D__TARGET_ARCH_x86 -g -O2 -Wall -Werror -I$(BUILD)/gen -Ibpf -c $< -o $@
$(BUILD)/gen/%.skel.h: $(BUILD)/gen/%.bpf.o
	$(BPFTOOL) gen object $(BUILD)/gen/$*.lnk.o $<
	$(BPFTOOL) gen skeleton $(BUILD)/gen/$*.lnk.o name $* > $@

# Unit tests (Criterion), one binary per module.
$(BUILD)/tests/%: tests/unit/%.c $(APP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(APP_LIBS) -lcriterion $(LDLIBS)
$(UNIT_BINS): | $(SKELS)
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
# Test-only programs (synthetic recordings and the like), linked with our libraries.
TEST_TOOLS     := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(wildcard tests/tools/*.c))
$(BUILD)/tests/tools/%: tests/tools/%.c $(APP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(APP_LIBS) $(LDLIBS)
$(TEST_TOOLS): | $(SKELS)
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
$(FUZZ_BINS): | $(SKELS)
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

test: deps-test
	$(MAKE) all unit-bins fixtures
	$(MAKE) BUILD=$(BUILD)/asan SAN=1 unit-bins
	$(MAKE) BUILD=$(BUILD)/fuzz FUZZ=1 fuzz-bins
	@sh tests/run.sh all $(BUILD)

demo: deps-test
	$(MAKE) all fixtures
	@sh tools/demo.sh $(BUILD)

bench: deps-test
	$(MAKE) all fixtures
	@sh tools/bench.sh $(BUILD)

# Scenario 6 only: a 10-minute system-wide recording, its RSS every 10 s.
bench-long: deps-test
	$(MAKE) all fixtures
	@BENCH_ONLY=6 sh tools/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
