import { formatPrice } from "./format.js";

const TAX_RATE = 0.2;

export class Cart {
  constructor(items = []) {
    this.items = items;
  }

  add(item, quantity = 1) {
    const existing = this.items.find(
      (line) => line.sku === item.sku,
    );
    if (existing) {
      existing.quantity += quantity;
    } else {
      this.items.push({ ...item, quantity });
    }
    return this;
  }

  total() {
    const subtotal = this.items.reduce(
      (sum, line) => sum + line.price * line.quantity,
      0,
    );
    return {
      subtotal,
      tax: subtotal * TAX_RATE,
      total: subtotal * (1 + TAX_RATE),
    };
  }

  summary() {
    return this.items
      .filter((line) => line.quantity > 0)
      .map((line) => [
        line.name,
        formatPrice(line.price * line.quantity),
      ].join(": "));
  }
}

export function emptyCart() {
  return new Cart([]);
}
