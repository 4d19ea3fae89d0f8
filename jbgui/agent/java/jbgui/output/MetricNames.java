package jbgui.output;

/**
 * The 19 per-block metrics of JBInsTrace (seed §3.2.1), in the seed's order. The Python side
 * keeps the same list in jbgui/model/layout.py; a test compares them.
 */
public final class MetricNames {
    private MetricNames() {}

    public static final String[] NAMES = {
        "bytecodes", "array_reads", "array_writes", "float_ops", "ref_loads", "control", "control_changing",
        "own_ref_field_reads", "own_ref_field_writes", "own_prim_field_reads", "own_prim_field_writes",
        "other_ref_field_reads", "other_ref_field_writes", "other_prim_field_reads", "other_prim_field_writes",
        "other_class_invokes", "allocations", "virtual_calls", "static_calls",
    };

    public static final String JOINED = String.join(" ", NAMES);
}
