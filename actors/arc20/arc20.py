"""ARC20Token: a fungible token with ERC-20 semantics (ARC-20).

`transfer` moves the caller's tokens; `approve` lets a spender move up to an
allowance of them with `transferFrom`, which decreases the allowance. The
caller is `pvm_host.caller()`: the signer of a transaction that targets the
token, or the actor that called it with `pvm_host.call` — so a contract
(the ARC-21 subscriptions merchant, say) spends what it was approved for,
never what its user holds. Every failure raises with a message that names
the account and the amounts; nothing changes then.

Deploy with `(name, symbol, decimals, initial_supply)`; the deployer (or
`owner`, if given) holds the initial supply.
"""

import pvm_host

ZERO = "0x" + "0" * 40


def _account(value, what):
    """A lowercase 0x address, or ValueError naming `what`."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be an address string, got {value!r}")
    address = value.lower()
    digits = address[2:]
    if not (address.startswith("0x") and len(digits) == 40 and all(c in "0123456789abcdef" for c in digits)):
        raise ValueError(f"{what} {value!r} is not a 0x-prefixed 20-byte address")
    return address


def _amount(value, what):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be a non-negative int, got {value!r}")
    return value


class ARC20Token:
    def deploy(self, name, symbol, decimals, initial_supply, owner=None):
        if not isinstance(name, str) or not name or not isinstance(symbol, str) or not symbol:
            raise ValueError("name and symbol must be non-empty strings")
        if not isinstance(decimals, int) or not 0 <= decimals <= 36:
            raise ValueError(f"decimals must be an int from 0 to 36, got {decimals!r}")
        holder = _account(owner, "owner") if owner is not None else pvm_host.tx_sender()
        supply = _amount(initial_supply, "initial_supply")
        self.storage["name"] = name
        self.storage["symbol"] = symbol
        self.storage["decimals"] = decimals
        self.storage["supply"] = supply
        self.storage["balance:" + holder] = supply
        pvm_host.emit("Transfer", {"from": ZERO, "to": holder, "value": supply})

    def name(self):
        return self.storage["name"]

    def symbol(self):
        return self.storage["symbol"]

    def decimals(self):
        return self.storage["decimals"]

    def totalSupply(self):
        return self.storage["supply"]

    def balanceOf(self, account):
        return self.storage.get("balance:" + _account(account, "account"), 0)

    def allowance(self, owner, spender):
        key = "allowance:" + _account(owner, "owner") + ":" + _account(spender, "spender")
        return self.storage.get(key, 0)

    def transfer(self, to, value):
        self._move(pvm_host.caller(), _account(to, "to"), _amount(value, "value"))
        return True

    def approve(self, spender, value):
        owner = pvm_host.caller()
        spender = _account(spender, "spender")
        value = _amount(value, "value")
        self.storage["allowance:" + owner + ":" + spender] = value
        pvm_host.emit("Approval", {"owner": owner, "spender": spender, "value": value})
        return True

    def transferFrom(self, owner, to, value):
        spender = pvm_host.caller()
        owner = _account(owner, "owner")
        value = _amount(value, "value")
        key = "allowance:" + owner + ":" + spender
        allowed = self.storage.get(key, 0)
        if allowed < value:
            raise ValueError(f"allowance of {spender} over {owner}'s tokens is {allowed}, below {value}")
        self._move(owner, _account(to, "to"), value)
        self.storage[key] = allowed - value
        return True

    def _move(self, sender, to, value):
        if to == ZERO:
            raise ValueError("cannot transfer to the zero address (that would burn tokens)")
        have = self.storage.get("balance:" + sender, 0)
        if have < value:
            raise ValueError(f"balance of {sender} is {have}, below {value}")
        if sender != to:
            self.storage["balance:" + sender] = have - value
            self.storage["balance:" + to] = self.storage.get("balance:" + to, 0) + value
        pvm_host.emit("Transfer", {"from": sender, "to": to, "value": value})
