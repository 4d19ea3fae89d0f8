# jbgui: `make demo` and `make test` do all set-up first (scripts/setup.sh), idempotently.

PYTHON_BIN := .venv/bin/python
JBTRACE    := .venv/bin/jbtrace
EXAMPLES   := build/examples
DEMO_TRACE := build/demo-trace
DEMO_SHOT  := build/demo-explorer.png
JBGUI      := .venv/bin/jbgui

.PHONY: setup test test-slow demo bench clean distclean

setup:
	@scripts/setup.sh

# pytest exits 5 when it ran no tests; that is a failure (a broken collection, a wrong path), so
# it is reported as one rather than passed through quietly.
define run_pytest
	@$(PYTHON_BIN) -m pytest -q $(1) tests; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make: pytest ran no tests: failing" >&2; fi; \
	exit $$status
endef

# The suite's slowest tests are listed at its end: CI must stay well inside its time.
test: setup
	$(call run_pytest,--durations=25)

test-slow:
	@scripts/setup.sh --export-tools
	$(call run_pytest,-m slow)

# Compile the bundled example, record it, show what was recorded, and open the explorer on it.
demo: setup
	@rm -rf $(EXAMPLES)
	@mkdir -p $(EXAMPLES)
	javac -g -d $(EXAMPLES) resources/examples/example/*.java
	$(JBTRACE) record --force -o $(DEMO_TRACE) -- java -cp $(EXAMPLES) example.Main
	@echo
	@echo "== $(DEMO_TRACE)"
	@ls -l $(DEMO_TRACE) $(DEMO_TRACE)/events
	@echo
	@echo "== threads ($(DEMO_TRACE)/threads.jsonl)"
	@sed -e '$$a\' $(DEMO_TRACE)/threads.jsonl
	@echo
	@echo "== the example's classes in $(DEMO_TRACE)/static.xml"
	@grep -o '<class [^>]*name="example/[^"]*"' $(DEMO_TRACE)/static.xml | sed 's/.*name="//; s/"$$//'
	@echo
	@echo "== agent warnings ($(DEMO_TRACE)/agent.log)"
	@cat $(DEMO_TRACE)/agent.log
	@echo
	@# The explorer on the trace: in a window when there is a display, else a screenshot of it
	@# rendered on a virtual one (Xvfb), so that the demo shows something on any machine.
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		echo "== opening the explorer on $(DEMO_TRACE)"; \
		$(JBGUI) $(DEMO_TRACE); \
	else \
		echo "== no display: the explorer's window on $(DEMO_TRACE), rendered to $(DEMO_SHOT)"; \
		xvfb-run -a -s "-screen 0 1600x1000x24" $(JBGUI) $(DEMO_TRACE) --screenshot $(DEMO_SHOT) \
			--select "main:Shapes.printAreas" --view method; \
	fi

# Benchmarks are scripts that print side-by-side measurements; there is nothing to assert. These
# build their own workloads; the others in benchmarks/ take a trace (bench_range.py,
# bench_readers.py, codec_share.py, loop_share.py, path_share.py, receiver_cache.py) or are helpers (thread_cpu.py,
# jedit_startup.py, listed_trace.py), and are run by hand (README).
BENCHMARKS = bench_recorder bench_retransform_floor bench_analyzer bench_blockviews bench_explorer bench_views \
	bench_store
bench: setup
	@scripts/setup.sh --bench-tools
	@set -e; for name in $(BENCHMARKS); do \
		echo "== benchmarks/$$name.py"; $(PYTHON_BIN) "benchmarks/$$name.py"; \
	done

clean:
	rm -rf build .pytest_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf .venv *.egg-info
