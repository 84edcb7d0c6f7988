import { format } from "./format.js";

const TAX_RATE = 0.2;
let counter = 0;

/**
 * A shopping cart.
 */
export class Cart extends Base {
  items = [];

  constructor(owner) {
    super();
    this.owner = owner;
  }

  // the sum of every line
  total() {
    return this.items.reduce((sum, item) => sum + item.price, 0);
  }

  static empty() {
    return new Cart(null);
  }
}

export function formatTotal(cart) {
  const label = "function notAFunction() {}";
  return format(cart.total(), label);
}

const discount = (price, rate) => price * (1 - rate);

function* ids() {
  yield counter++;
}

module.exports.helper = function (x) {
  return x;
};

const api = {
  get(url) {
    return fetch(url);
  },
  post: async (url, body) => fetch(url, { method: "POST", body }),
};
