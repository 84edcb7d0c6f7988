package shop;

import java.util.ArrayList;
import java.util.List;

/**
 * The inventory.
 */
public class Inventory implements Iterable<Item> {
    public static final int MAX_ITEMS = 100;
    private final List<Item> items = new ArrayList<>();

    public Inventory() {
        this(MAX_ITEMS);
    }

    // adds one
    @Override
    public void add(Item item) {
        items.add(item);
    }

    public interface Listener {
        void changed(Inventory inventory);
    }

    enum State { OPEN, CLOSED }

    record Entry(String name, int count) {}

    static class Loader<T> {
        T load(String path) { return null; }
    }
}

@interface Audited {
    String value();
}
