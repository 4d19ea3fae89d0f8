package jbgui.instr;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.Adler32;
import java.util.zip.CRC32;

/**
 * Instrumented classes kept on disk between runs ({@link CachedClass}). One directory per
 * (agent build, JDK, instrumentation options); one file per class, named after the class and the
 * CRC-32 and length of its original bytes, so a changed class file never meets a stale entry.
 * The JDK's classes are fixed for a given JDK; a program's classes read from the disk (jars, class
 * directories: {@link ClassPlan#fromFile}) change as it is rebuilt, so theirs go under
 * {@code app/}, are named with an Adler-32 of the original too (two independent checksums and the
 * length for a class file that changes every build), and are pruned least recently used first by
 * the recorder's front end (jbgui/launch/class_cache.py): a hit touches an entry not touched for a
 * day. The classes the JVM loaded before the agent are also kept together in one bundle
 * ({@link CacheBundle}): start-up reads it once instead of some 900 files. Files are written to a
 * temporary name and renamed, so concurrent JVMs never read half a file. Any problem with the
 * cache only means instrumenting again.
 */
public final class ClassCache {
    private final File dir;
    private volatile boolean usable = true;
    /** The classes loaded before the agent (their bundle is open from {@link #openBundle} until {@link #preloadedDone}). */
    private final BundleUse preloaded = new BundleUse(CacheBundle.FILE_NAME);
    /**
     * The JDK's classes loaded during that time, while start-up instruments the loaded ones
     * (CacheBundle.STARTUP_FILE_NAME): the same ones every run, read from one file instead of a
     * file each. On JDK 25 (some 340 classes, which its verifier loads as it checks the redefined
     * ones) the transformer's cache lookups in a hello world went from 115 to about 20 ms, its
     * wall time to 0.98 of the agent's before (12 alternating pairs; docs/recorder-cost.md).
     */
    private final BundleUse startup = new BundleUse(CacheBundle.STARTUP_FILE_NAME);

    public ClassCache(File dir) {
        this.dir = dir;
    }

    public File directory() {
        return dir;
    }

    static int crc(byte[] original) {
        CRC32 crc = new CRC32();
        crc.update(original, 0, original.length);
        return (int) crc.getValue();
    }

    /** The subdirectory of a program's own classes (read from the disk, not the JDK's). */
    public static final String APP = "app";

    /** Where one original class file's entry is: its name and checksums (see the class comment). */
    static final class Key {
        final String className;
        final int crc;
        final int length;
        final boolean app;
        final File file;

        Key(File dir, String className, byte[] original, boolean app) {
            this.className = className;
            this.crc = crc(original);
            this.length = original.length;
            this.app = app;
            String name = className.replace('/', '.');
            if (name.length() > 180) {
                name = name.substring(0, 100) + "~" + Integer.toHexString(name.hashCode());
            }
            String sums = Integer.toHexString(crc);
            if (app) {
                Adler32 adler = new Adler32();
                adler.update(original, 0, original.length);
                sums += "-" + Integer.toHexString((int) adler.getValue());
            }
            this.file = new File(app ? new File(dir, APP) : dir, name + "@" + sums + "-" + length + ".jbc");
        }
    }

    /** The key of a class's entry; {@code app}: a program's class rather than the JDK's. */
    Key key(String className, byte[] original, boolean app) {
        return new Key(dir, className, original, app);
    }

    // What served the classes of this run, for agent.log (summary): [JDK, app] x [served, instrumented afresh].
    // AtomicIntegers: an AtomicIntegerArray's VarHandle classes would be loaded before the agent
    // instruments the loaded classes, each one more to redefine (jbgui.output.Utf8).
    private final AtomicInteger[] counts = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};

    /** "class cache: N of M classes from the cache, K of them the program's" for agent.log. */
    public String summary() {
        int jdkServed = counts[0].get();
        int jdkStored = counts[1].get();
        int appServed = counts[2].get();
        int appStored = counts[3].get();
        return "class cache served " + (jdkServed + appServed) + " of " + (jdkServed + jdkStored + appServed + appStored)
                + " classes loaded after start-up and instrumented (the program's own: " + appServed + " of "
                + (appServed + appStored) + "); " + dir;
    }

    /** A day: an app entry used again after this long has its time stamped (pruning is by time). */
    private static final long TOUCH_AFTER_MILLIS = 24L * 3600 * 1000;

    /**
     * Reads the bundle of the classes loaded before the agent, before they are retransformed.
     * Returns how many classes it holds (0: none, or not usable).
     */
    public int openBundle() {
        markUsed();
        CacheBundle b = usable ? CacheBundle.open(new File(dir, CacheBundle.FILE_NAME)) : null;
        preloaded.open = b;
        opened = b;
        startup.open = usable ? CacheBundle.open(new File(dir, CacheBundle.STARTUP_FILE_NAME)) : null;
        startup.window = true;
        return b == null ? 0 : b.size();
    }

    /**
     * The method ids the open bundle's entry for this class takes, or -1 (no bundle, no entry):
     * what the engine reserves for it before the retransformation (PreloadedLayout).
     */
    public int bundledIdCount(String className) {
        CacheBundle b = preloaded.open;
        return b == null ? -1 : b.idCount(className);
    }

    /** The open bundle's entry for this class, not checked against the class's bytes; else null. */
    CachedClass bundled(String className) {
        CacheBundle b = preloaded.open;
        return b == null ? null : b.byName(className);
    }

    /** The bundle this run opened, kept after start-up releases it, so that its file can be closed. */
    private volatile CacheBundle opened;

    /** Closes the bundle's file if nothing read its templates (the writer copied its classes' descriptions). */
    public void closeUnreadBundle() {
        CacheBundle b = opened;
        opened = null;
        if (b != null) {
            b.closeUnread();
        }
    }

    /** Whether the open bundle's templates (static.xml of its classes) can be read and are sound. */
    public boolean templatesSound() {
        CacheBundle b = preloaded.open;
        try {
            return b != null && b.templates() != null;
        } catch (CachedClass.DamagedTemplate e) {
            return false;
        }
    }

    /** The marker whose time says when a run last used this directory. */
    public static final String LAST_USED = "last-used";

    /**
     * Stamps {@link #LAST_USED} with the time now: the recorder's front end removes the directories
     * of other agent builds and JDKs once they go unused (jbgui/launch/class_cache.py), and reads
     * this rather than the directory's time, which reads alone never change.
     */
    private void markUsed() {
        File marker = new File(dir, LAST_USED);
        if (marker.setLastModified(System.currentTimeMillis())) {
            return;
        }
        try {
            dir.mkdirs();       // a first run: the directory its entries go into
            new FileOutputStream(marker).close();
        } catch (IOException e) {
            // A cache that cannot be written still serves; only its age is not told.
        }
    }

    /**
     * The retransformation of the classes loaded before the agent is over: releases the bundles
     * and, for each that was missing or missed more than a few of its classes, returns what writes
     * it anew on the writer thread (null when nothing needs writing). A new bundle keeps the old
     * one's other classes, so that programs that differ in what the JVM loads before the agent (or
     * during start-up) do not take turns rewriting it.
     */
    public jbgui.output.XmlFragment preloadedDone() {
        String servedBefore = preloaded.summary();
        startup.window = false;
        String servedStartUp = startup.summary();
        final Runnable writePreloaded = preloaded.done(usable, dir);
        final Runnable writeStartup = startup.done(usable, dir);
        bundlesSummary = "class cache bundle served " + servedBefore + (writePreloaded != null ? ", written anew" : "")
                + "; start-up bundle served " + servedStartUp + (writeStartup != null ? ", written anew" : "");
        if (writePreloaded == null && writeStartup == null) {
            return null;
        }
        return new jbgui.output.XmlFragment() {
            @Override
            public void writeTo(OutputStream out) {
                // Nothing for static.xml: it only rides the writer's queue, behind the classes'
                // own descriptions (whose templates it reuses).
                if (writePreloaded != null) {
                    writePreloaded.run();
                }
                if (writeStartup != null) {
                    writeStartup.run();
                }
            }
        };
    }

    private volatile String bundlesSummary = "";

    /**
     * For agent.log, after {@link #preloadedDone}: "class cache bundle served N of M" classes
     * loaded before the agent, "; start-up bundle served K of L" JDK classes loaded during
     * start-up, each followed by ", written anew" when its bundle is written again.
     */
    public String bundlesSummary() {
        return bundlesSummary;
    }

    /**
     * A JDK class the transformer met, {@code preloaded} (loaded before the agent) or not: one
     * loaded before the agent, or while start-up instruments those, belongs in a bundle.
     */
    void noteJdk(String className, CachedClass c, boolean fromBundle, boolean preloadedClass) {
        if (preloadedClass) {
            preloaded.note(className, c, fromBundle);
        } else if (startup.window) {
            startup.note(className, c, fromBundle);
        }
    }

    /** One bundle as a run uses it: its open file, and the classes this run met that belong in it. */
    private static final class BundleUse {
        final String fileName;
        volatile CacheBundle open;
        /** For the start-up bundle: while start-up instruments the classes loaded before the agent. */
        volatile boolean window;
        private final List<CacheBundle.Entry> noted = new ArrayList<>();
        private int fromBundle;

        BundleUse(String fileName) {
            this.fileName = fileName;
        }

        synchronized void note(String className, CachedClass c, boolean served) {
            noted.add(new CacheBundle.Entry(className, c));
            if (served) {
                fromBundle++;
            }
        }

        synchronized String summary() {
            return fromBundle + " of " + noted.size();
        }

        /** Releases the bundle; returns what writes it anew, or null when it serves well enough. */
        Runnable done(boolean usable, final File dir) {
            final CacheBundle old = open;
            open = null;
            final List<CacheBundle.Entry> entries;
            synchronized (this) {
                // A few classes the bundle misses come from their own files: some classes the JVM
                // reconstitutes differently from run to run (seen: 6 of 1,179, an abstract method's
                // overpass in another place), and writing 27 MB again for them every other run would
                // cost more than their files.
                int missed = noted.size() - fromBundle;
                if (!usable || noted.isEmpty() || (old != null && missed <= Math.max(8, noted.size() / 32))) {
                    if (old != null && fromBundle == 0) {
                        old.closeUnread(); // no class it served will ask for its templates
                    }
                    noted.clear();
                    return null;
                }
                entries = new ArrayList<>(noted);
                noted.clear();
            }
            return new Runnable() {
                @Override
                public void run() {
                    if (old != null) {
                        Set<String> seen = new HashSet<>();
                        for (CacheBundle.Entry e : entries) {
                            seen.add(e.name);
                        }
                        for (CacheBundle.Entry e : old.entries()) {
                            if (!seen.contains(e.name)) {
                                entries.add(e);
                            }
                        }
                    }
                    CacheBundle.write(dir, fileName, entries);
                }
            };
        }
    }

    /**
     * The cached class for this original class file, or null. {@code crc} is the original's
     * CRC-32 ({@link #crc}); with {@code preloaded} the bundle of
     * the classes loaded before the agent is looked at first, else during start-up the start-up bundle.
     */
    CachedClass load(Key key, boolean preloaded) {
        if (!usable) {
            return null;
        }
        CacheBundle b = key.app ? null : preloaded ? this.preloaded.open : startup.open;
        if (b != null) {
            CachedClass c = b.find(key.className, key.crc, key.length);
            if (c != null) {
                if (!preloaded) {
                    counts[0].incrementAndGet();
                }
                return c;
            }
        }
        File f = key.file;
        long modified = f.lastModified();
        if (modified == 0L) {
            missed(key, preloaded);
            return null;
        }
        // FileInputStream, not java.nio.file.Files: NIO keeps a per-thread buffer cache that the
        // program's thread would later clean up at its exit, in the trace (trace neutrality).
        // Only the head: the template, most of the entry, is read by the writer (CachedClass.read).
        try (FileInputStream in = new FileInputStream(f)) {
            long size = f.length();
            byte[] header = new byte[CachedClass.HEADER];
            CachedClass.readFully(in, header, 0, header.length);
            long headLength = CachedClass.headLength(header);
            if (headLength < 0 || headLength > size || headLength > Integer.MAX_VALUE - 16) {
                throw new IOException("damaged cached class");
            }
            byte[] head = java.util.Arrays.copyOf(header, (int) headLength);
            CachedClass.readFully(in, head, header.length, head.length);
            CachedClass c = CachedClass.read(head, f, size);
            c.originalCrc = key.crc;
            c.originalLength = key.length;
            if (!preloaded) {
                counts[key.app ? 2 : 0].incrementAndGet();
            }
            if (key.app && System.currentTimeMillis() - modified > TOUCH_AFTER_MILLIS) {
                f.setLastModified(System.currentTimeMillis());
            }
            return c;
        } catch (IOException | RuntimeException e) {
            f.delete();
            missed(key, preloaded);
            return null;
        }
    }

    /**
     * An entry that served a class but whose template turned out damaged when the writer read it
     * (the class was described afresh): removed, so that the next run instruments the class and
     * stores it anew instead of describing it afresh every time.
     */
    void discard(Key key) {
        key.file.delete();
    }

    /** The class is instrumented afresh (and stored once described, on the writer thread). */
    private void missed(Key key, boolean preloaded) {
        if (!preloaded) {
            counts[key.app ? 3 : 1].incrementAndGet();
        }
    }

    /** Keeps a class this run instrumented. */
    void store(Key key, CachedClass c) {
        if (!usable) {
            return;
        }
        File f = key.file;
        File where = f.getParentFile();
        File tmp = new File(where, f.getName() + "." + jbgui.runtime.Config.pid() + ".tmp");
        try {
            if (!where.isDirectory() && !where.mkdirs() && !where.isDirectory()) {
                if (!key.app) {
                    usable = false;
                }
                return;
            }
            try (OutputStream out = new BufferedOutputStream(new FileOutputStream(tmp), 1 << 16)) {
                c.write(out);
            }
            if (!tmp.renameTo(f)) {
                tmp.delete();
            }
        } catch (IOException | RuntimeException e) {
            tmp.delete();
        }
    }
}
