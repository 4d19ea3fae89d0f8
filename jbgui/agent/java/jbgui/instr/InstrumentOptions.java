package jbgui.instr;

/**
 * What {@link ClassInstrumenter} inserts and what static.xml describes: one value instead of a row
 * of booleans, so a call site names what it turns on. Built from the agent's options
 * ({@code jbgui.agent.Transformer}) or for a description without a trace ({@link StaticListing}).
 */
public final class InstrumentOptions {
    /** Block probes at all ({@code level=block}); false: method start and end only. */
    public final boolean blockLevel;
    /** Basic blocks cut after every call and possible exception too ({@code bba=precise}). */
    public final boolean precise;
    /** Each block's instruction listing in static.xml ({@code instructions=on}). */
    public final boolean instructions;
    /** Basic-block events selected ({@code events=}). */
    public final boolean blockEvents;
    /** Receiver-type events selected. */
    public final boolean receiverEvents;
    /** Exception-exit events selected. */
    public final boolean exceptionExitEvents;
    /** Clock stamps around blocking calls ({@code blocking}; see {@link BlockingCalls}). */
    public final boolean blockingStamps;
    /**
     * A method's first block, when nothing jumps to it, gets no probe: its event is implied by the
     * method's start and written by the trace writer ({@code elide}; see {@link BlockElision}).
     */
    public final boolean entryElision;
    /**
     * A tight loop's blocks are counted in a local and stored as one loop record when the loop is
     * left ({@code loops}; see {@link LoopCycles}).
     */
    public final boolean loopRecords;
    /**
     * What joins the instruction lines of a block's listing: a newline in static.xml;
     * {@link StaticListing} uses a character reference to a carriage return instead, which no
     * listed line can contain ({@link jbgui.output.Xml#text} replaces control characters), so that a
     * string constant holding a newline cannot be taken for the start of the next instruction.
     */
    public final String listingSeparator;

    private InstrumentOptions(Builder b) {
        blockLevel = b.blockLevel;
        precise = b.precise;
        instructions = b.instructions;
        blockEvents = b.blockEvents;
        receiverEvents = b.receiverEvents;
        exceptionExitEvents = b.exceptionExitEvents;
        blockingStamps = b.blockingStamps;
        entryElision = b.entryElision;
        loopRecords = b.loopRecords;
        listingSeparator = b.listingSeparator;
    }

    /** Everything on (block level, every event, clock stamps), no listing, default blocks. */
    public static Builder builder() {
        return new Builder();
    }

    /** A mutable draft of {@link InstrumentOptions}. */
    public static final class Builder {
        private boolean blockLevel = true;
        private boolean precise;
        private boolean instructions;
        private boolean blockEvents = true;
        private boolean receiverEvents = true;
        private boolean exceptionExitEvents = true;
        private boolean blockingStamps = true;
        private boolean entryElision;
        private boolean loopRecords;
        private String listingSeparator = "\n";

        private Builder() {}

        public Builder blockLevel(boolean on) { blockLevel = on; return this; }
        public Builder precise(boolean on) { precise = on; return this; }
        public Builder instructions(boolean on) { instructions = on; return this; }
        public Builder blockEvents(boolean on) { blockEvents = on; return this; }
        public Builder receiverEvents(boolean on) { receiverEvents = on; return this; }
        public Builder exceptionExitEvents(boolean on) { exceptionExitEvents = on; return this; }
        public Builder blockingStamps(boolean on) { blockingStamps = on; return this; }
        public Builder entryElision(boolean on) { entryElision = on; return this; }
        public Builder loopRecords(boolean on) { loopRecords = on; return this; }
        public Builder listingSeparator(String separator) { listingSeparator = separator; return this; }

        public InstrumentOptions build() {
            return new InstrumentOptions(this);
        }
    }
}
