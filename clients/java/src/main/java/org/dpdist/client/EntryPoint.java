package org.dpdist.client;

import java.lang.reflect.InvocationTargetException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.dpdist.client.protocols.Protocol;

/**
 * One protocol's entry point, for an application that collects with one protocol (the JavaScript client's
 * {@code dpdist-client/<name>}): its {@link #fromConfig}, {@link #privatize} and {@link #privatizeRecord} take that
 * protocol's configs only (another protocol's config is refused, naming the entry point), and an application that
 * never reaches {@link DpDist} leaves the other protocols' classes to its shrinker (R8, ProGuard).
 *
 * <pre>{@code
 * EntryPoint<GRR> grr = new EntryPoint<>(GRR.PROTOCOL, GRR.class, GRR::new);
 * ReportBatch reports = grr.privatize(configJson, Arrays.asList(3, 5));
 * }</pre>
 */
public final class EntryPoint<P extends Protocol> {
    public final String protocol;
    public final Class<P> type;
    private final Function<Map<String, Object>, P> factory;
    private final Map<String, EntryPoint<?>> table;

    public EntryPoint(String protocol, Class<P> type, Function<Map<String, Object>, P> factory) {
        this.protocol = protocol;
        this.type = type;
        this.factory = factory;
        this.table = Collections.<String, EntryPoint<?>>singletonMap(protocol, this);
    }

    /**
     * The entry point of a protocol class, read from the class itself: its {@code PROTOCOL} name and its public
     * constructor from a config map (by reflection: an application shrunk by R8 keeps both, or uses the constructor).
     */
    public static <P extends Protocol> EntryPoint<P> of(Class<P> type) {
        try {
            String name = (String) type.getField("PROTOCOL").get(null);
            java.lang.reflect.Constructor<P> constructor = type.getConstructor(Map.class);
            return new EntryPoint<>(name, type, config -> {
                try {
                    return constructor.newInstance(config);
                } catch (InvocationTargetException error) {
                    if (error.getCause() instanceof RuntimeException) throw (RuntimeException) error.getCause();
                    throw new IllegalStateException(error.getCause());
                } catch (ReflectiveOperationException error) {
                    throw new IllegalStateException(error);
                }
            });
        } catch (ReflectiveOperationException | ClassCastException error) {
            throw new IllegalArgumentException(type.getName() + " is no protocol class: it needs a public static final String PROTOCOL and a public "
                + "constructor taking the config (a Map)", error);
        }
    }

    /** The protocol of the (parsed) config {@code config}. */
    P construct(Map<String, Object> config) {
        return factory.apply(config);
    }

    /** The protocol a config of this protocol (a map, its JSON text, or a client view) describes; others are refused. */
    public P fromConfig(Object config) {
        return type.cast(Config.build(config, table, protocol));
    }

    /** Randomize {@code values} under a config of this protocol: one report per value, from the CSPRNG. */
    public ReportBatch privatize(Object config, List<?> values) {
        return privatize(config, values, RandomSource.secureSource());
    }

    /** Randomize {@code values} under a config of this protocol, drawing from {@code source}. */
    public ReportBatch privatize(Object config, List<?> values, RandomSource source) {
        return fromConfig(config).privatize(values, source);
    }

    /** {@link #privatize} then {@link Wire#encodeRecord}: one binary record, its reports in a uniformly random order. */
    public byte[] privatizeRecord(Object config, List<?> values, RandomSource source, String fileId) {
        return Wire.encodeRecord(Shuffle.shuffleBatch(privatize(config, values, source), source), fileId);
    }
}
