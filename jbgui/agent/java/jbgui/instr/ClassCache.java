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
    /** The bundle, from {@link #openBundle} until {@link #preloadedDone}. */
    private volatile CacheBundle bundle;
    /** The classes loaded before the agent that this run instrumented or read, for the next bundle. */
    private final List<CacheBundle.Entry> preloaded = new ArrayList<>();
    private int preloadedFromBundle;

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
        bundle = usable ? CacheBundle.open(new File(dir, CacheBundle.FILE_NAME)) : null;
        opened = bundle;
        return bundle == null ? 0 : bundle.size();
    }

    /**
     * The method ids the open bundle's entry for this class takes, or -1 (no bundle, no entry):
     * what the engine reserves for it before the retransformation (PreloadedLayout).
     */
    public int bundledIdCount(String className) {
        CacheBundle b = bundle;
        return b == null ? -1 : b.idCount(className);
    }

    /** The open bundle's entry for this class, not checked against the class's bytes; else null. */
    CachedClass bundled(String className) {
        CacheBundle b = bundle;
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
        CacheBundle b = bundle;
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
     * The retransformation of the classes loaded before the agent is over: releases the bundle and,
     * when there was none or it missed more than a few of them, returns what writes it anew on the
     * writer thread (null when nothing needs writing). The new bundle keeps the old one's other classes, so that
     * programs that differ in what the JVM loads before the agent do not take turns rewriting it.
     */
    public jbgui.output.XmlFragment preloadedDone() {
        final CacheBundle old = bundle;
        bundle = null;
        final List<CacheBundle.Entry> entries;
        synchronized (preloaded) {
            // A few classes the bundle misses come from their own files: some classes the JVM
            // reconstitutes differently from run to run (seen: 6 of 1,179, an abstract method's
            // overpass in another place), and writing 27 MB again for them every other run would
            // cost more than their files.
            int missed = preloaded.size() - preloadedFromBundle;
            if (!usable || preloaded.isEmpty() || (old != null && missed <= Math.max(8, preloaded.size() / 32))) {
                preloaded.clear();
                return null;
            }
            entries = new ArrayList<>(preloaded);
            preloaded.clear();
        }
        return new jbgui.output.XmlFragment() {
            @Override
            public void writeTo(OutputStream out) {
                // Nothing for static.xml: it only rides the writer's queue, behind the classes'
                // own descriptions (whose templates it reuses).
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
                CacheBundle.write(dir, entries);
            }
        };
    }

    /** Bundle statistics for agent.log: "served N of M classes loaded before the agent". */
    public String preloadedSummary() {
        synchronized (preloaded) {
            return preloadedFromBundle + " of " + preloaded.size();
        }
    }

    /** A class loaded before the agent, as this run instruments it: it belongs in the bundle. */
    void notePreloaded(String className, CachedClass c, boolean fromBundle) {
        synchronized (preloaded) {
            preloaded.add(new CacheBundle.Entry(className, c));
            if (fromBundle) {
                preloadedFromBundle++;
            }
        }
    }

    /**
     * The cached class for this original class file, or null. {@code crc} is the original's
     * CRC-32 ({@link #crc}); with {@code preloaded} the bundle is looked at first.
     */
    CachedClass load(Key key, boolean preloaded) {
        if (!usable) {
            return null;
        }
        CacheBundle b = preloaded && !key.app ? bundle : null;
        if (b != null) {
            CachedClass c = b.find(key.className, key.crc, key.length);
            if (c != null) {
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
