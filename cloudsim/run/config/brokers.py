"""The options of the two commands about brokers themselves: `cloudsim brokers` (the catalogue) and
`cloudsim check-broker` (a broker run on hostile workloads), declared like every other command's."""

from __future__ import annotations

from dataclasses import dataclass

from agents.registry import reserved_option_problem
from cloudsim.run.config.fields import (ConfigError, check_number_option, flag_of, keyword_list, option, real, require,
                                        whole)

__all__ = ["BrokersConfig", "CheckBrokerConfig"]


@dataclass(frozen=True)
class BrokersConfig:
    """`cloudsim brokers`: how the catalogue is printed."""

    json: bool = option(False, "--json", "one JSON object per broker instead of a table", switch=True)


@dataclass(frozen=True)
class CheckBrokerConfig:
    """`cloudsim check-broker`: which broker, made how, and how long a decision may take."""

    broker: str | None = option(None, "BROKER", "a broker name (cloudsim brokers), module:Class or "
                                "path/to/file.py:Class", positional=True)
    broker_options: str | None = option(None, "--broker-options", "keyword options for the broker's class (values: "
                                        "numbers, True/False/None, text)", metavar="KEY=VALUE[,KEY=VALUE]")
    seed: int = option(0, "--seed", "the seed each run gives the broker (default 0)", parse=whole, metavar="N")
    timeout: float = option(60.0, "--timeout", "seconds one decide() call may take before it counts as hung "
                            "(default 60)", parse=real, metavar="SECONDS")

    def __post_init__(self) -> None:
        cls = type(self)
        require(self.broker is not None, cls, "broker", None, "give the broker to check (a name, or module:Class)")
        check_number_option(flag_of(cls, "seed"), self.seed, whole=True, at_least=0)
        check_number_option(flag_of(cls, "timeout"), self.timeout, "seconds", above=0)
        for key in self.keywords:
            problem = reserved_option_problem(key)
            if problem is not None:
                raise ConfigError(flag_of(cls, "broker_options"), self.broker_options, problem)

    @property
    def keywords(self) -> dict[str, object]:
        """--broker-options as the broker's keyword arguments."""
        try:
            return keyword_list(self.broker_options) if self.broker_options else {}
        except ValueError as error:
            raise ConfigError(flag_of(type(self), "broker_options"), self.broker_options, str(error)) from None
