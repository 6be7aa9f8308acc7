# clustertwin build.
#
#   make run      build, install missing Debian packages (as root), run the default scenario
#   make test     build and run every test (plain build and ASan+UBSan build)
#   make bench    performance benchmarks, printed as ratios measured in one run
#   make twin     this machine as a twin: measure it (cpu, and MPI in two launches of mpirun -np 2),
#                 calibrate a hardware profile, validate it on held-out sizes (out/twin/)
#   make install  PREFIX=/usr/local DESTDIR=   (binary, man page, bash completion, examples)
#   make clean
#
# Sources are found by wildcard: a new .c in base/ plan/ sim/ models/ hw/ scenarios/
# reports/ tui/ joins the library; tests/test_<name>.c becomes a cmocka test
# binary linked with the library (an archive: only the modules it uses); cli/*.c make up the program.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
PKG_CONFIG ?= pkg-config
PKGS     = gsl sqlite3 libxml-2.0 ncursesw libcgraph libgvc
TESTPKGS = cmocka

B   = build
BIN = $(B)/clustertwin
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
TEST_LIBS   := $(shell $(PKG_CONFIG) --libs $(TESTPKGS) 2>/dev/null)
# MPI (optional): OpenMPI's wrapper says how to compile and link. Without it
# the mpi backend and MPI sweeps report that MPI is not built in.
MPICC ?= mpicc
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null)
ifneq ($(strip $(MPI_LIBS)),)
MPI_DEFS = -DCT_HAVE_MPI
endif

# Which folder may use which library. Each folder is compiled with the
# include flags of its own libraries only, so the build itself enforces the
# layering (docs/architecture-build.md):
#
#   base/ models/ sim/   none (GSL, numerics with headers on the default
#                        path, is not policed: models/, sim/ and hw/ use it)
#   scenarios/           libxml2
#   hw/                  MPI (hw/comm.c; the GPU libraries are dlopen()ed)
#   reports/             SQLite, Graphviz (cgraph, gvc)
#   tui/                 ncursesw
#   plan/ cli/           MPI
#   tests/               everything, and cmocka
#
# A header on the compiler's default path (sqlite3.h, curses.h, cmocka.h)
# needs no -I flag to be found, so a folder also gets, for each library it
# may not use, -I$(B)/forbid/<library>: stand-in headers searched before the
# system's, each of which stops the build. A file in sim/ that includes
# <sqlite3.h> fails so:
#
#   build/forbid/sqlite/sqlite3.h:1:2: error: #error "<sqlite3.h>: sqlite may be
#   used only in reports/ tests/ (Makefile: USES_<folder>)"
#
# Link flags stay global (one program, one library archive).
LIBRARIES := xml sqlite graphviz ncurses mpi cmocka
USES_base      :=
USES_models    :=
USES_sim       :=
USES_scenarios := xml
USES_hw        := mpi
USES_reports   := sqlite graphviz
USES_tui       := ncurses
USES_plan      := mpi
USES_cli       := mpi
USES_tests     := $(LIBRARIES)
FOLDERS := base models sim scenarios hw reports tui plan cli tests
CF_xml      := $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null)
CF_sqlite   := $(shell $(PKG_CONFIG) --cflags sqlite3 2>/dev/null)
CF_graphviz := $(shell $(PKG_CONFIG) --cflags libcgraph libgvc 2>/dev/null)
CF_ncurses  := $(shell $(PKG_CONFIG) --cflags ncursesw 2>/dev/null)
CF_mpi      := $(MPI_CFLAGS)
CF_cmocka   := $(shell $(PKG_CONFIG) --cflags $(TESTPKGS) 2>/dev/null)
FORBID_xml      := libxml/parser.h libxml/tree.h libxml/relaxng.h libxml/xmlerror.h libxml/globals.h \
                   libxml/xmlschemas.h libxml/xpath.h libxml/xmlreader.h
FORBID_sqlite   := sqlite3.h sqlite3ext.h
FORBID_graphviz := cgraph.h gvc.h graphviz/cgraph.h graphviz/gvc.h
FORBID_ncurses  := curses.h ncurses.h term.h ncursesw/curses.h ncursesw/ncurses.h ncursesw/term.h
FORBID_mpi      := mpi.h
FORBID_cmocka   := cmocka.h
# The include flags of source file $(1): its folder's libraries, and the
# stand-ins of the others.
folder_of = $(firstword $(subst /, ,$(1)))
USE_CFLAGS = $(foreach l,$(USES_$(call folder_of,$(1))),$(CF_$(l))) \
             $(foreach l,$(filter-out $(USES_$(call folder_of,$(1))),$(LIBRARIES)),-I$(B)/forbid/$(l))
FORBID_STAMP := $(B)/forbid/.made

WARN     = -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
DEFS     = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DCT_VERSION='"$(VERSION)"' $(MPI_DEFS)
OPT     ?= -O2 -g
CFLAGS_ALL = $(WARN) $(DEFS) $(OPT) -I. -I$(B)/gen $(CFLAGS)
SANFLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -DCT_SCHED_CROSSCHECK
LDLIBS_ALL = $(PKG_LIBS) $(MPI_LIBS) -lm -ldl $(LDLIBS)

LIB_SRC  := $(sort $(wildcard base/*.c plan/*.c sim/*.c models/*.c hw/*.c scenarios/*.c reports/*.c tui/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
BENCH_SRC := $(sort $(wildcard tests/bench_*.c))
GEN_SRC  := $(B)/gen/embedded.c $(B)/gen/catalog_fields.c
EMBED    := $(sort $(wildcard models/catalog/*.xml)) scenarios/scenario.rng reports/schema.sql

LIB_OBJ   := $(LIB_SRC:%.c=$(B)/obj/%.o) $(GEN_SRC:$(B)/gen/%.c=$(B)/obj/gen/%.o)
LIB_SOBJ  := $(LIB_SRC:%.c=$(B)/san/%.o) $(GEN_SRC:$(B)/gen/%.c=$(B)/san/gen/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/obj/%.o)
CLI_SOBJ  := $(CLI_SRC:%.c=$(B)/san/%.o)
TESTS     := $(TEST_SRC:tests/%.c=$(B)/tests/%)
STESTS    := $(TEST_SRC:tests/%.c=$(B)/san/tests/%)
BENCHES   := $(BENCH_SRC:tests/%.c=$(B)/tests/%)
# The GPU stand-in libraries the unit tests load (see "Stand-ins" below).
# Defined here, before the first rule that names them: make expands a
# rule's prerequisites when it reads the rule, so a later definition left
# them out of unit-test and check-valgrind.
STANDINS  := $(patsubst tests/standin/%.c,$(B)/tests/libstandin-%.so,$(wildcard tests/standin/*.c))

.PHONY: all run test unit-test cli-test bench install uninstall clean deps test-deps check-deps twin
.SUFFIXES:
.DELETE_ON_ERROR:

all: check-deps $(BIN)

deps:
	@tools/deps.sh install

# What deps installs, and the real Slurm tests/cli_slurm.sh starts.
test-deps:
	@tools/deps.sh install-test

check-deps:
	@tools/deps.sh check

run: deps
	@$(MAKE) --no-print-directory $(BIN)
	@mkdir -p out
	@rm -f out/default.db
	$(BIN) run scenarios/default.xml --json out/default.json --db out/default.db
	$(BIN) report out/default.db --out out/default

test: test-deps
	@$(MAKE) --no-print-directory $(BIN) $(B)/san/clustertwin $(TESTS) $(STESTS) $(STANDINS)
	@$(MAKE) --no-print-directory check-libraries unit-test cli-test

unit-test: $(TESTS) $(STESTS) $(STANDINS) $(B)/tests/libfailmalloc.so
	@fail=0; for t in $(TESTS) $(STESTS); do \
	  if ASAN_OPTIONS=detect_leaks=1 $$t >$$t.log 2>&1; then echo "ok   $$t"; \
	  else echo "FAIL $$t (log: $$t.log)"; tail -n 30 $$t.log; fail=1; fi; done; exit $$fail

cli-test: $(BIN) $(B)/san/clustertwin $(B)/tests/libfailmalloc.so $(STANDINS)
	@tests/cli.sh $(BIN)
	@tests/cli.sh $(B)/san/clustertwin
	@tests/cli_install.sh
	@tests/docs.sh $(BIN)
	@tests/golden.sh $(BIN)
	@tests/layers.sh

# The unit tests under valgrind memcheck: any memory error or definite or
# indirect leak fails (tests/valgrind.supp holds third-party noise only).
# Forked children (killed-writer tests) are not traced. The stand-in GPU
# libraries are built first: test_gpubackends and test_cudafp8 load them.
VALGRIND = valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
           --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
           --suppressions=tests/valgrind.supp --quiet
.PHONY: check-valgrind
check-valgrind: $(TESTS) $(STANDINS)
	@fail=0; for t in $(TESTS); do \
	  if CT_VALGRIND=1 $(VALGRIND) $$t >$$t.vg.log 2>&1; then echo "ok   valgrind $$t"; \
	  else echo "FAIL valgrind $$t (log: $$t.vg.log)"; grep -E '^==[0-9]+==' $$t.vg.log | head -n 30; fail=1; fi; done; exit $$fail

# The 1M-GPU year (tests/scale/trace-1m-year.xml) beside its trace, both
# written here, not committed (the trace is 41 MB).
$(B)/scale/year-1m.csv: tools/gen-trace.py
	@mkdir -p $(@D)
	python3 tools/gen-trace.py --jobs 1000000 --seed 1 --scale 10 >$@.tmp && mv $@.tmp $@
$(B)/scale/trace-1m-year.xml: tests/scale/trace-1m-year.xml
	@mkdir -p $(@D)
	cp $< $@

bench: check-deps $(BENCHES) $(BIN) $(B)/scale/year-1m.csv $(B)/scale/trace-1m-year.xml
	@fail=0; for b in $(BENCHES); do $$b || fail=1; done; tools/bench-peers.sh --no-install || fail=1; exit $$fail

# Our engine against SimGrid on the same event-churn model, our scheduler
# against a SimPy FIFO + EASY-backfill peer (installs libsimgrid-dev and
# python3-simpy as root; tools/bench-peers.sh).
.PHONY: bench-peers
bench-peers: $(B)/tests/bench_engine $(B)/tests/bench_flow $(B)/tests/bench_sched
	@tools/bench-peers.sh

# make twin: measure this host with the cpu backend and MPI between two
# ranks (skipped without mpirun), fit a hardware profile on every other size
# of each sweep (calibrate prints the held-out errors), then validate the
# profile on sizes no sweep measured (scenarios/twin-host.xml), and write the
# reports. Takes about 4 minutes on 2 cores. Results in out/twin/: twin.db (measurements),
# profile.xml, validate.db, validate-cpu.json, validate-mpi.json,
# report-cpu/ and report-mpi/ (HTML with the predicted-vs-measured chart).
TWIN = out/twin
TWIN_MPIRUN = OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 mpirun -np 2
twin: check-deps
	@$(MAKE) --no-print-directory $(BIN)
	@mkdir -p $(TWIN) && rm -f $(TWIN)/twin.db $(TWIN)/validate.db
	$(BIN) measure --backend cpu --db $(TWIN)/twin.db --dir $(TWIN)/ckpt --quiet
	@if command -v mpirun >/dev/null 2>&1; then \
	  for launch in 1 2; do \
	    echo "$(TWIN_MPIRUN) $(BIN) measure --backend mpi --db $(TWIN)/twin.db --quiet   # launch $$launch of 2"; \
	    $(TWIN_MPIRUN) $(BIN) measure --backend mpi --db $(TWIN)/twin.db --quiet || exit 1; \
	  done; \
	else echo "make twin: mpirun not found: MPI collectives are not measured"; fi
	$(BIN) calibrate --db $(TWIN)/twin.db --out $(TWIN)/profile.xml
	$(BIN) validate scenarios/twin-host.xml --backend cpu --profile $(TWIN)/profile.xml \
	  --db $(TWIN)/validate.db --json $(TWIN)/validate-cpu.json --quiet
	@if command -v mpirun >/dev/null 2>&1; then \
	  echo "$(TWIN_MPIRUN) $(BIN) validate scenarios/twin-host.xml --backend mpi ..."; \
	  $(TWIN_MPIRUN) $(BIN) validate scenarios/twin-host.xml --backend mpi --profile $(TWIN)/profile.xml \
	    --db $(TWIN)/validate.db --json $(TWIN)/validate-mpi.json --quiet || exit 1; \
	  $(BIN) report $(TWIN)/validate.db --run 2 --out $(TWIN)/report-mpi >/dev/null; fi
	$(BIN) report $(TWIN)/validate.db --run 1 --out $(TWIN)/report-cpu

# libFuzzer harnesses tests/fuzz/fuzz_<name>.c, built with clang against an
# instrumented copy of the library; `make fuzz FUZZ_SECONDS=60` shares the
# time among them (tools/fuzz.sh; seeds in tests/fuzz/<name>/).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZFLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZERS  := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
LIB_FOBJ := $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o) $(GEN_SRC:$(B)/gen/%.c=$(B)/fuzz/obj/gen/%.o)

.PHONY: fuzz
fuzz: $(FUZZERS)
	@tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

$(B)/fuzz/libclustertwin.a: $(LIB_FOBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/fuzz/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CFLAGS_ALL) $(FUZZFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(B)/fuzz/obj/%.o: %.c | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) $(FUZZFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(B)/fuzz/libclustertwin.a | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) $(FUZZFLAGS) -fsanitize=fuzzer -o $@ $< $(B)/fuzz/libclustertwin.a $(LDLIBS_ALL)

# Allocation-failure shim for tests/cli_oom.sh (LD_PRELOAD; tests only).
$(B)/tests/libfailmalloc.so: tests/failmalloc.c
	@mkdir -p $(@D)
	$(CC) $(WARN) -O2 -g -fPIC -shared -o $@ $< -ldl

.PHONY: check-oom
check-oom: $(BIN) $(B)/tests/libfailmalloc.so
	@OOM_STEP=5 tests/cli_oom.sh $(BIN)
	@OOM_DB=1 OOM_STEP=40 tests/cli_oom.sh $(BIN)

# The library is an archive so a test links only the modules it uses.
$(B)/libclustertwin.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/san/libclustertwin.a: $(LIB_SOBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(B)/libclustertwin.a
	@mkdir -p $(@D)
	$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

$(B)/san/clustertwin: $(CLI_SOBJ) $(B)/san/libclustertwin.a
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(B)/obj/%.o: %.c | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) -MMD -MP -c -o $@ $<

$(B)/san/%.o: %.c | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) $(SANFLAGS) -MMD -MP -c -o $@ $<

# Each folder but tests/ is refused each library it may not use: a one-line
# file including the library's header must not compile with the folder's
# flags (make test runs this).
.PHONY: check-libraries
check-libraries: $(FORBID_STAMP)
	@fail=0; $(foreach f,$(filter-out tests,$(FOLDERS)),$(foreach l,$(filter-out $(USES_$(f)),$(LIBRARIES)),\
	  if echo '#include <$(firstword $(FORBID_$(l)))>' | $(CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$(f)/x.c) \
	       -x c -fsyntax-only - 2>/dev/null; then \
	    echo "FAIL $(f)/ can include <$(firstword $(FORBID_$(l)))>"; fail=1; fi;)) \
	if [ $$fail = 0 ]; then echo "ok   each folder includes only its own libraries' headers"; fi; exit $$fail

# The stand-in headers of each library (see "Which folder may use which
# library" above); remade when the Makefile changes.
$(FORBID_STAMP): Makefile
	@rm -rf $(B)/forbid
	@$(foreach l,$(LIBRARIES),for h in $(FORBID_$(l)); do mkdir -p $(B)/forbid/$(l)/$$(dirname $$h) && \
	  printf '#error "<%s>: %s may be used only in %s (Makefile: USES_<folder>)"\n' $$h $(l) \
	  "$(strip $(foreach f,$(FOLDERS),$(if $(filter $(l),$(USES_$(f))),$(f)/)))" > $(B)/forbid/$(l)/$$h || exit 1; done;)
	@touch $@

$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(B)/san/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -MMD -MP -c -o $@ $<

# The catalog, the scenario schema (scenario.rng) and the results database's
# schema (reports/schema.sql) are compiled into the program so it runs from
# any directory and after `make install` without data files to find.
$(B)/gen/embedded.c: $(EMBED) tools/embed.sh
	@mkdir -p $(@D)
	tools/embed.sh $(EMBED) > $@.tmp && mv $@.tmp $@

# The catalog kinds' field tables (models/catalog.h catalog_field), one
# declaration per attribute in models/catalog_fields.txt.
$(B)/gen/catalog_fields.c: models/catalog_fields.txt tools/fields.sh
	@mkdir -p $(@D)
	tools/fields.sh models/catalog_fields.txt > $@.tmp && mv $@.tmp $@

$(B)/tests/%: $(B)/obj/tests/%.o $(B)/libclustertwin.a
	@mkdir -p $(@D)
	$(CC) $(OPT) -o $@ $^ $(TEST_LIBS) $(LDLIBS_ALL)

$(B)/obj/tests/%.o: tests/%.c | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) -MMD -MP -c -o $@ $<

$(B)/san/tests/%: $(B)/san/obj/tests/%.o $(B)/san/libclustertwin.a
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS_ALL)

$(B)/san/obj/tests/%.o: tests/%.c | $(FORBID_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(call USE_CFLAGS,$<) $(SANFLAGS) -MMD -MP -c -o $@ $<

# Stand-ins for the CUDA driver, runtime, cuBLAS, cuBLASLt and NCCL, and a broken
# CBLAS (tests/standin/), built only for tests and loaded by path (CT_CUDA_DRIVER_LIB,
# CT_CUDART_LIB, CT_CUBLAS_LIB, CT_CUBLASLT_LIB, CT_NCCL_LIB, CT_CBLAS_LIB) by
# test_gpubackends, test_cudafp8 and tests/cli_hw.sh.
$(B)/tests/libstandin-%.so: tests/standin/%.c tests/standin/halfconv.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -D_POSIX_C_SOURCE=200809L -o $@ $<

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/clustertwin/scenarios/traces
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/clustertwin
	install -m 644 scenarios/*.xml scenarios/scenario.rng $(DESTDIR)$(PREFIX)/share/clustertwin/scenarios/
	install -m 644 scenarios/traces/* $(DESTDIR)$(PREFIX)/share/clustertwin/scenarios/traces/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/clustertwin.1 $(DESTDIR)$(PREFIX)/share/man/man1/clustertwin.1
	install -m 644 tools/clustertwin.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/clustertwin

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/clustertwin
	rm -rf $(DESTDIR)$(PREFIX)/share/clustertwin
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/clustertwin.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/clustertwin

clean:
	rm -rf $(B) out

-include $(shell find $(B) -name '*.d' 2>/dev/null)
