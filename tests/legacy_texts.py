"""Text in the languages legacy encodings carry, written for these tests: a small source
file per language (comments, strings, messages), as an agent meets them in old projects.

ENCODED lists (language, Python codec, the encoding name file.read gives the file:
docs/protocol.md, file.read)."""

from __future__ import annotations

TEXTS = {
"zh_hans": """# 用户配置模块
# 这个文件保存了应用程序的默认设置，修改之前请先备份。
DEFAULT_NAME = "张三"
GREETING = "你好，世界！欢迎使用本系统。"

def load_config(path):
    \"\"\"读取配置文件并返回字典；如果文件不存在，就使用默认值。\"\"\"
    # 注意：旧版本的配置文件使用 GBK 编码保存
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# 错误信息
ERRORS = ["文件未找到", "权限不足", "网络连接失败，请稍后重试"]
""",
"zh_hant": """# 使用者設定模組
# 這個檔案儲存了應用程式的預設設定，修改之前請先備份。
DEFAULT_NAME = "陳大文"
GREETING = "你好，世界！歡迎使用本系統。"

def load_config(path):
    \"\"\"讀取設定檔並傳回字典；如果檔案不存在，就使用預設值。\"\"\"
    # 注意：舊版本的設定檔使用 Big5 編碼儲存
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# 錯誤訊息
ERRORS = ["找不到檔案", "權限不足", "網路連線失敗，請稍後再試"]
""",
"ja": """# ユーザー設定モジュール
# このファイルにはアプリケーションの初期設定が保存されています。変更する前にバックアップしてください。
DEFAULT_NAME = "山田太郎"
GREETING = "こんにちは、世界！このシステムへようこそ。"

def load_config(path):
    \"\"\"設定ファイルを読み込んで辞書を返します。ファイルがない場合は初期値を使います。\"\"\"
    # 注意：古い版の設定ファイルはシフトJISで保存されています
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# エラーメッセージ
ERRORS = ["ファイルが見つかりません", "権限がありません", "ネットワークに接続できません。後でもう一度お試しください"]
""",
"ko": """# 사용자 설정 모듈
# 이 파일에는 응용 프로그램의 기본 설정이 저장되어 있습니다. 수정하기 전에 먼저 백업하십시오.
DEFAULT_NAME = "홍길동"
GREETING = "안녕하세요, 세계! 이 시스템에 오신 것을 환영합니다."

def load_config(path):
    \"\"\"설정 파일을 읽어서 사전을 돌려줍니다. 파일이 없으면 기본값을 사용합니다.\"\"\"
    # 주의: 이전 버전의 설정 파일은 EUC-KR 인코딩으로 저장되어 있습니다
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# 오류 메시지
ERRORS = ["파일을 찾을 수 없습니다", "권한이 없습니다", "네트워크 연결에 실패했습니다. 잠시 후 다시 시도하십시오"]
""",
"ru": """# Модуль пользовательских настроек
# Этот файл хранит настройки приложения по умолчанию; перед изменением сделайте резервную копию.
DEFAULT_NAME = "Иван Петров"
GREETING = "Привет, мир! Добро пожаловать в нашу систему."

def load_config(path):
    \"\"\"Читает файл настроек и возвращает словарь; если файла нет, берёт значения по умолчанию.\"\"\"
    # Внимание: старые версии файла настроек сохранены в кодировке Windows-1251
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# Сообщения об ошибках
ERRORS = ["Файл не найден", "Недостаточно прав", "Не удалось подключиться к сети, попробуйте позже"]
""",
"fr": """# Module de configuration de l’utilisateur
# Ce fichier contient les réglages par défaut de l’application — faites une copie avant de le modifier.
DEFAULT_NAME = "François Lefèvre"
GREETING = "Bonjour à tous ! Bienvenue dans notre système, ça marche très bien."

def load_config(path):
    \"\"\"Lit le fichier de réglages et renvoie un dictionnaire ; s’il n’existe pas, on prend les valeurs par défaut.\"\"\"
    # Attention : les anciennes versions étaient enregistrées en Windows-1252 (prix en €)
    return {"name": DEFAULT_NAME, "greeting": GREETING}

# Messages d’erreur
ERRORS = ["Fichier introuvable", "Accès refusé", "Échec de la connexion réseau, réessayez plus tard"]
""",
"de": """# Benutzereinstellungen
# Diese Datei enthält die Standardeinstellungen der Anwendung. Bitte vor Änderungen eine Sicherung anlegen.
GREETING = "Grüß Gott! Willkommen in unserem System, schön dass Sie da sind."
ERRORS = ["Datei nicht gefunden", "Zugriff verweigert", "Netzwerkverbindung fehlgeschlagen, später erneut versuchen"]
""",
"pl": """# Ustawienia użytkownika
# Ten plik zawiera domyślne ustawienia aplikacji. Przed zmianą zrób kopię zapasową.
GREETING = "Dzień dobry! Witamy w naszym systemie, życzymy miłej pracy."
ERRORS = ["Nie znaleziono pliku", "Brak uprawnień", "Błąd połączenia sieciowego, spróbuj ponownie później"]
""",
"el": """# Ρυθμίσεις χρήστη
# Αυτό το αρχείο περιέχει τις προεπιλεγμένες ρυθμίσεις της εφαρμογής. Κρατήστε αντίγραφο ασφαλείας.
GREETING = "Γεια σου κόσμε! Καλώς ήρθατε στο σύστημά μας."
ERRORS = ["Το αρχείο δεν βρέθηκε", "Δεν επιτρέπεται η πρόσβαση", "Η σύνδεση απέτυχε, δοκιμάστε ξανά αργότερα"]
""",
}

ENCODED = [
    ("zh_hans", "gbk", "gb18030"), ("zh_hans", "gb18030", "gb18030"),
    ("zh_hant", "big5", "big5"), ("ja", "shift_jis", "shift_jis"), ("ja", "euc_jp", "euc-jp"),
    ("ko", "euc_kr", "euc-kr"), ("ru", "cp1251", "cp1251"), ("ru", "koi8_r", "koi8-r"),
    ("ru", "iso8859_5", "iso-8859-5"), ("fr", "cp1252", "cp1252"),
    ("de", "cp1252", "latin-1"),  # 7 umlauts: too few to name; latin-1 reads them the same
    ("pl", "cp1250", "cp1250"), ("el", "cp1253", "cp1253"),
]
