"""A module that a crafted model.pt names, to check that loading neither imports
it (unless allowed) nor calls anything in it but a torch.nn.Module subclass."""
import torch

CALLS = []


def sentinel(*args, **kwargs):
    """Stands for any importable function (os.system ...): records that it was called."""
    CALLS.append((args, kwargs))
    return torch.nn.Identity()


class TinyActorCritic(torch.nn.Module):
    """A legitimate custom actor-critic, for the allowed_modules case."""

    def __init__(self, observation_space, action_space, width=2):
        super().__init__()
        self.pi = torch.nn.Linear(observation_space.shape[0], width)

    def act(self, obs, deterministic=False):
        return self.pi(obs).argmax(-1).numpy()
