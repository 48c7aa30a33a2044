package org.dpdist.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.dpdist.client.protocols.Protocol;

/**
 * Protocols from their JSON config (as Python's {@code proto.config()} writes it), against a table of the protocol
 * entry points a caller offers: the whole registry ({@link DpDist}) or one protocol ({@link EntryPoint}), as the
 * JavaScript client's {@code src/config.js}.
 */
public final class Config {
    /** The version of the protocol configs this client reads and writes (Python's {@code CONFIG_VERSION}). */
    public static final int CONFIG_VERSION = 1;

    private Config() {
    }

    /** {@code text} parsed as JSON, or InvalidParameterError naming the config. */
    public static Object parse(String text) {
        try {
            return Json.parse(text);
        } catch (IllegalArgumentException error) {
            throw new InvalidParameterError("The 'config' argument is not valid JSON (" + error.getMessage() + ").");
        }
    }

    /** Whether {@code value} is a client view {@code {config, format, design}} rather than a config. */
    public static boolean isClientView(Object value) {
        Map<String, Object> map = Json.asObject(value);
        return map != null && !map.containsKey("protocol") && map.get("config") instanceof Map && map.get("format") instanceof Map;
    }

    /**
     * The protocol {@code config} describes, built by the entry point {@code table.get(config.protocol)}.  {@code config}
     * may be the config (a map, or its JSON text) or a collector's client view (Python's {@code protocol.client_view()}:
     * {@code {config, format, design}}): the protocol of its config, once the view's format and design constants are
     * checked against this client's own derivation ({@link Protocol#checkView}; a view that differs is refused).
     *
     * @param where the entry point, named when the protocol is not in {@code table} (null: the whole client)
     */
    public static Protocol build(Object config, Map<String, EntryPoint<?>> table, String where) {
        Object parsed = config instanceof String ? parse((String) config) : config;
        if (isClientView(parsed)) {
            Map<String, Object> view = Json.asObject(parsed);
            Protocol protocol = build(view.get("config"), table, where);
            protocol.checkView(view);
            return protocol;
        }
        Map<String, Object> map = Json.asObject(parsed);
        if (map == null || !(map.get("protocol") instanceof String)) {
            throw new InvalidParameterError("The 'config' argument must be an object with a 'protocol' key (as written by proto.config()). Got "
                + Json.show(parsed) + ".");
        }
        String name = (String) map.get("protocol");
        String named = Shown.shown(name, Collections.emptyList(), 200); // a collector's text: escaped and cut
        Object version = map.containsKey("version") ? map.get("version") : (long) CONFIG_VERSION;
        if (!(version instanceof Number) || ((Number) version).doubleValue() != CONFIG_VERSION) {
            throw new InvalidParameterError("Config version " + Shown.shown(Json.show(version), Collections.emptyList(), 200)
                + " of protocol '" + named + "' is not supported (this client reads " + CONFIG_VERSION + ").");
        }
        EntryPoint<?> entry = table.get(name);
        if (entry == null) {
            List<String> names = new ArrayList<>(table.keySet());
            Collections.sort(names);
            throw new UnsupportedProtocolError(where == null
                ? "The Java client does not implement protocol '" + named + "'; it implements " + String.join(", ", names)
                    + ". If dpdist has it, use the Python client (dpdist privatize) for it."
                : "The entry point '" + where + "' implements only " + String.join(", ", names) + "; the config names '" + named
                    + "' (use DpDist.fromConfig, or that protocol's own entry point, for it).");
        }
        try {
            return entry.construct(map);
        } catch (ArithmeticException | IllegalArgumentException error) {
            // a number past what double precision computes with (sw's b = 1e308) is the config's, not a bug of this
            // client (Python and JavaScript say InvalidParameterError too)
            throw new InvalidParameterError("The config of protocol '" + named + "' holds a number this client cannot compute with: "
                + Shown.shown(error.getMessage(), Collections.emptyList(), 200) + ".");
        }
    }
}
