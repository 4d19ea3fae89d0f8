"""On-disk constants of the trace format (docs/trace-format.md).

The recorder defines the same names in ``jbgui/agent/java/jbgui/runtime/EventLayout.java`` and
``jbgui/agent/java/jbgui/output/MetricNames.java``; ``tests/model/test_layout_constants.py``
checks that both sides agree.
"""

FORMAT_VERSION = 4
# What this jbgui reads: version 2 added START_RECEIVER_OWN (a start word that stands for its
# receiver too); version 3 added loop records (FILTER_LOOPS); version 4 added a loop record's
# fifth word, the path of its leaf's calls (LOOP_PATH_FLAG). A version 1 trace has none of them, a
# version 1-2 trace never has loop records and a version 3 trace never has path words, so the same
# readers read all four.
READABLE_FORMAT_VERSIONS = (1, 2, 3, 4)

TYPE_SHIFT = 30
METHOD_SHIFT = 11
METHOD_BITS = 19
BLOCK_BITS = 11
TYPE_EXTENDED = 0
TYPE_METHOD_START = 1
TYPE_METHOD_END = 2
TYPE_BLOCK = 3

SUBTYPE_SHIFT = 27
VALUE_MASK = (1 << SUBTYPE_SHIFT) - 1
EXT_CLASS_LOAD = 0
EXT_RECEIVER = 1
EXT_EXCEPTION_EXIT = 2
EXT_THREAD_SWITCH = 3
EXT_THROWABLE = 4
# Only the first and third word of a loop record (FILTER_LOOPS below), which readers expand: never
# an event of its own.
EXT_LOOP = 5
# Only the optional fourth word of a loop record: extended(EXT_LOOP_CALL, k << METHOD_BITS | id),
# each step of the cycle's block lo + k followed by a call of the static leaf method id (its start,
# its block 0, its end: three events); and the optional fifth word after it (format version 4),
# extended(EXT_LOOP_CALL, LOOP_PATH_FLAG | path), the blocks each of those calls runs (below).
# Readers expand them with the record: never an event of their own.
EXT_LOOP_CALL = 6
# Tells a loop record's fifth word from its fourth (a call word's value never has bit 26: k < 26
# sits in bits 19-23). Its path is a mask of LOOP_SPAN_MAX bits: bit j stands for the leaf's block
# j, word start + BLOCK_FROM_START + j, and bit 0 is always set. Each call of the leaf is then its
# start, the path's blocks in ascending order (a leaf has no backward jump) and its end: 2 +
# popcount(path) events. Without a fifth word a call's path is 1 (start, block 0, end).
LOOP_PATH_FLAG = 1 << 26
# The recorder's runtime passes a record's call as one int (Tracer.loopHead's call): the cycle's
# block k in the low LOOP_CALL_PATH_SHIFT bits, the leaf's path above them. Not in the trace;
# here because the recorder defines it next to the format's constants (EventLayout.java).
LOOP_CALL_PATH_SHIFT = 5

MAX_METHOD_ID = (1 << METHOD_BITS) - 1
BLOCKS_PER_PAGE = 1 << BLOCK_BITS
MAX_CLASS_ID = VALUE_MASK
# Python-side masks (no Java counterpart needed): the fields above as masks after shifting.
BLOCK_MASK = BLOCKS_PER_PAGE - 1
SUBTYPE_MASK = 7
BLOCK_WORD_MASK = (1 << (METHOD_BITS + BLOCK_BITS)) - 1   # a block's id: page << BLOCK_BITS | index

# The recorder's probes carry only a method's start word: its block b (over all its pages) is
# (start + BLOCK_FROM_START + b) mod 2**32 and its end (start + END_FROM_START) mod 2**32, since
# block pages continue the method's id (EventLayout.java).
BLOCK_FROM_START = (TYPE_BLOCK - TYPE_METHOD_START) << TYPE_SHIFT
END_FROM_START = (TYPE_METHOD_END - TYPE_METHOD_START) << TYPE_SHIFT

STREAM_HEADER_SIZE = 32
CHUNK_HEADER_SIZE = 32
STREAM_KIND_THREAD = 0
STREAM_KIND_SHARED = 1
CODEC_NONE = 0
CODEC_ZLIB = 1
CODEC_ZSTD = 2
FILTER_NONE = 0
FILTER_BYTE_PLANES = 1
# A bit of the filter byte: the payload's start words marked START_ENTRY_IMPLIED each stand for the
# start and its method's first block (format/entry_blocks.py); the header counts the events.
FILTER_ENTRY_BLOCKS = 2
# A bit of the filter byte (format version 3): the payload holds loop records, three to five words
# that each stand for the block events of a loop's steps and the calls of a leaf in them
# (format/entry_blocks.py); the header counts the expanded events, so readers expand the records
# before anything else reads the words.
FILTER_LOOPS = 4
CHUNK_FLAG_LAST = 1
CHUNK_FLAG_FINAL_FLUSH = 2
CHUNK_FLAG_LOST_BEFORE = 4

CLOCK_HEADER_SIZE = 16
CLOCK_RECORD_SIZE = 32
CLOCK_FLAG_EXACT = 1
CLOCK_FLAG_BLOCKING = 2  # taken by the thread around a call that may block (with EXACT)
CLOCK_FLAG_AFTER = 4  # with BLOCKING: taken when the call had returned

BUFFER_MIN_EVENTS = 1024
BUFFER_MAX_EVENTS = 262144
# The recorder hands a buffer over once it holds length - BUFFER_SLACK_EVENTS events; most block
# probes do not test, and at most UNCHECKED_RUN_MAX of them run between two tests (EventLayout.java).
# So a chunk holds up to BUFFER_MAX_EVENTS events, as before, in sizes that vary.
BUFFER_SLACK_EVENTS = 512
UNCHECKED_RUN_MAX = 256
# Set by the entry probe in a start word whose method's first block has no probe (the recorder's
# elide option, docs/trace-format.md); only in payloads with FILTER_ENTRY_BLOCKS, which readers expand.
START_ENTRY_IMPLIED = 1
# Set in an instance method's start word that has no receiver word after it because the receiver's
# class is the method's own (format version 2): readers take the class from static.xml. Not an event
# of its own; readers mask it out of the start word (check.py, replay_kernel.py, entry_blocks.py).
START_RECEIVER_OWN = 2
# A loop record (FILTER_LOOPS; docs/trace-format.md): extended(EXT_LOOP, back << LOOP_STEPS_BITS |
# steps), the loop header's BLOCK word, extended(EXT_LOOP, LOOP_CYCLE_FLAG | mask). Its steps fit
# in LOOP_STEPS_BITS (a longer loop stores several records); the mask's bit k stands for block
# header - back + k, so a cycle spans at most LOOP_SPAN_MAX consecutive blocks; the flag tells the
# third word from the first. An EXT_LOOP_CALL word right after the third is the record's fourth,
# and one with LOOP_PATH_FLAG right after the fourth its fifth (format version 4).
LOOP_STEPS_BITS = 20
LOOP_STEPS_MAX = (1 << LOOP_STEPS_BITS) - 1
LOOP_CYCLE_FLAG = 1 << 26
LOOP_SPAN_MAX = 26
# The recorder hands a buffer over once its loop records stand for this many events, so that a
# chunk stands for at most BUFFER_MAX_EVENTS + 2 * LOOP_REPRESENTED_MAX events, far below the
# readers' MAX_CHUNK_EVENTS (format/chunks.py).
LOOP_REPRESENTED_MAX = 1 << 20

STREAM_MAGIC = b"JBTS"
CHUNK_MAGIC = b"JBCK"
CLOCK_MAGIC = b"JBCL"

METRIC_NAMES = (
    "bytecodes", "array_reads", "array_writes", "float_ops", "ref_loads", "control", "control_changing",
    "own_ref_field_reads", "own_ref_field_writes", "own_prim_field_reads", "own_prim_field_writes",
    "other_ref_field_reads", "other_ref_field_writes", "other_prim_field_reads", "other_prim_field_writes",
    "other_class_invokes", "allocations", "virtual_calls", "static_calls",
)


def method_start(method_id: int) -> int:
    return (TYPE_METHOD_START << TYPE_SHIFT) | (method_id << METHOD_SHIFT)


def method_end(method_id: int) -> int:
    return (TYPE_METHOD_END << TYPE_SHIFT) | (method_id << METHOD_SHIFT)


def block(page_method_id: int, index_in_page: int) -> int:
    return (TYPE_BLOCK << TYPE_SHIFT) | (page_method_id << METHOD_SHIFT) | index_in_page


def extended(subtype: int, value: int) -> int:
    return (subtype << SUBTYPE_SHIFT) | (value & VALUE_MASK)
