/** Where the login pages of an interaction live: `${LOGIN_PATH}/<interaction uid>[/<step>]`. */
export const LOGIN_PATH = "/ui/login";
