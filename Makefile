# jbgui: `make demo` and `make test` do all set-up first (scripts/setup.sh), idempotently.

PYTHON_BIN := .venv/bin/python
JBTRACE    := .venv/bin/jbtrace
EXAMPLES   := build/examples
DEMO_TRACE := build/demo-trace

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

test: setup
	$(call run_pytest,)

test-slow: setup
	$(call run_pytest,-m slow)

# Compile the bundled example, record it, and show what was recorded.
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

# Benchmarks are scripts that print side-by-side measurements; there is nothing to assert.
bench: setup
	@set -e; found=0; \
	for script in benchmarks/*.py; do \
		[ -e "$$script" ] || continue; found=1; \
		echo "== $$script"; $(PYTHON_BIN) "$$script"; \
	done; \
	[ $$found -eq 1 ] || echo "no benchmarks in benchmarks/"

clean:
	rm -rf build .pytest_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf .venv *.egg-info
